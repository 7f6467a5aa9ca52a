// The usage a Messages client reads: Anthropic's own counters as the upstream reported them (its
// convention: input_tokens without cache reads and writes), plus `cost`, the USD charged — or, for a
// request settled on an estimate, the estimate in the same convention.
import { nanoToUsd } from '../../billing/money.js';
import type { TokenUsage } from '../../billing/pricing.js';
import { isJsonObject, type JsonObject } from '../../json-object.js';
import type { Charge } from '../../pipeline/admission/reservation.js';
import type { ReportedUsage } from '../../providers/types.js';
import { mergeUsageCounts, reportAnthropicUsage, type AnthropicUsageCounts } from '../../providers/anthropic/usage.js';

/** Canonical counts → Anthropic's: input without cache reads and writes. */
export function anthropicCounts(tokens: TokenUsage): JsonObject {
  const writes = tokens.cacheWrite ?? 0;
  return {
    input_tokens: Math.max(0, tokens.input - tokens.cachedInput - writes),
    cache_creation_input_tokens: writes,
    cache_read_input_tokens: tokens.cachedInput,
    output_tokens: tokens.output,
  };
}

/** `reported`: the upstream's usage object (kept as it is when the charge is exact). */
export function usageWithCost(reported: unknown, charge: Charge): JsonObject {
  const cost = nanoToUsd(charge.cost);
  const { settlement } = charge;
  const upstream = isJsonObject(reported) ? reported : {};
  if (settlement.kind === 'exact') return { ...upstream, cost };
  if (settlement.kind === 'release') return { ...upstream, cost };
  return { ...upstream, ...anthropicCounts(settlement.tokens), cost };
}

/** Whether any cache_control marker of the request (tools, system, messages, top level) asks for one hour. */
export function asksOneHourCache(body: Readonly<Record<string, unknown>>): boolean {
  const oneHour = (value: unknown): boolean => isJsonObject(value) && isJsonObject(value.cache_control) && value.cache_control.ttl === '1h';
  const anyBlock = (content: unknown): boolean =>
    Array.isArray(content) && content.some((block) => oneHour(block) || (isJsonObject(block) && block.type === 'tool_result' && anyBlock(block.content)));
  if (oneHour(body) || anyBlock(body.tools) || anyBlock(body.system)) return true;
  return Array.isArray(body.messages) && body.messages.some((message) => isJsonObject(message) && anyBlock(message.content));
}

/** Anthropic counters read as they arrive (the last report of each wins) into canonical usage. */
export class UsageCounts {
  private readonly counts: AnthropicUsageCounts = {};

  merge(raw: unknown): void {
    mergeUsageCounts(this.counts, raw);
  }

  /**
   * The canonical usage; `reasoning` is the tokenizer count of the thinking text (display only). Cache
   * writes beyond the per-lifetime breakdown are 1-hour writes when the request asked for one (`askedOneHour`,
   * read only then): never priced below what may have been written.
   */
  report(thinkingTokens: number, askedOneHour: () => boolean): ReportedUsage | null {
    const { cache_creation_input_tokens: created = 0, ephemeral_5m_input_tokens: fiveMinutes = 0, ephemeral_1h_input_tokens: oneHour = 0 } = this.counts;
    const unassigned = created - fiveMinutes - oneHour;
    const counts = unassigned > 0 && askedOneHour() ? { ...this.counts, ephemeral_1h_input_tokens: oneHour + unassigned } : this.counts;
    const reported = reportAnthropicUsage(counts, '');
    if (!reported) return null;
    const reasoning = Math.min(thinkingTokens, reported.tokens.output);
    return reasoning === 0 ? reported : { ...reported, tokens: { ...reported.tokens, reasoning } };
  }

  /** The input counts alone (message_start's), output left at 0: what an estimate keeps of them. */
  input(): TokenUsage | null {
    if (this.counts.input_tokens === undefined) return null;
    return reportAnthropicUsage({ ...this.counts, output_tokens: 0 }, '')?.tokens ?? null;
  }
}
