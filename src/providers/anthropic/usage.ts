// Reads Anthropic usage counters into billable counts and the OpenAI-shaped usage object, with the price
// modifiers the answer reports (usage.speed, .inference_geo, .service_tier, .server_tool_use, and the
// message's model): the chat adapter and the Messages API's native cells read them alike.
import { countText } from '../../tokens/count-text.js';
import { isJsonObject } from '../../json-object.js';
import type { ReportedUsage } from '../types.js';
import { reportTokens, withModifiers, type ModifierReport } from '../usage-report.js';

const COUNTERS = ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const;
/** usage.cache_creation: the cache writes by lifetime (5-minute and 1-hour writes are priced apart). */
const CACHE_CREATION = ['ephemeral_5m_input_tokens', 'ephemeral_1h_input_tokens'] as const;

/**
 * Anthropic's counters as last reported: each field keeps the last value seen (never a sum); `modifiers`
 * what the answer said about how it was served (mergeUsageCounts and noteServedModel fill it).
 */
export type AnthropicUsageCounts = Partial<Record<(typeof COUNTERS)[number] | (typeof CACHE_CREATION)[number], number>> & { modifiers?: ModifierReport };

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** Overwrites the counters present in `raw`. message_delta's output_tokens is cumulative, and it may
 * restate input and cache counts with values that differ from message_start's: the last report wins. */
export function mergeUsageCounts(counts: AnthropicUsageCounts, raw: unknown): void {
  if (!isJsonObject(raw)) return;
  for (const name of COUNTERS) {
    const value = count(raw[name]);
    if (value !== undefined) counts[name] = value;
  }
  mergeAnthropicModifiers(counts, raw);
  if (!isJsonObject(raw.cache_creation)) return;
  for (const name of CACHE_CREATION) {
    const value = count(raw.cache_creation[name]);
    if (value !== undefined) counts[name] = value;
  }
}

/**
 * The price modifiers of one Anthropic `usage` object (message_start's, message_delta's or a whole
 * Message's), over what `holder.modifiers` holds (made when the first one is found): `speed` ("fast"),
 * `inference_geo`, `service_tier`, and `server_tool_use` — `{web_search_requests: 2}` counts as 2 uses
 * of `web_search` (the name without `_requests`, as `per_call` names the tool). A field the object lacks
 * keeps its earlier value; a null one (Anthropic sends `"speed": null`) is no report.
 */
export function mergeAnthropicModifiers(holder: { modifiers?: ModifierReport }, usage: unknown): void {
  if (!isJsonObject(usage)) return;
  const into = () => (holder.modifiers ??= {});
  if (typeof usage.speed === 'string') into().speed = usage.speed;
  if (typeof usage.inference_geo === 'string') into().geo = usage.inference_geo;
  if (typeof usage.service_tier === 'string') into().tier = usage.service_tier;
  if (isJsonObject(usage.server_tool_use)) {
    const uses: Record<string, number> = {};
    for (const [name, value] of Object.entries(usage.server_tool_use)) {
      const n = count(value);
      if (n !== undefined && n > 0) uses[name.replace(/_requests$/, '')] = n;
    }
    into().serverToolUses = uses;
  }
}

/** The Message's `model` (a whole Message's, or message_start's): the model that answered. */
export function noteServedModel(counts: AnthropicUsageCounts, model: unknown): void {
  if (typeof model === 'string' && model !== '') (counts.modifiers ??= {}).servedModel = model;
}

/**
 * Null without input and output counts (the request is then settled as estimated). Anthropic's input
 * count excludes cache reads and writes; the convention's prompt_tokens includes both, with reads as
 * cached tokens. Anthropic reports no reasoning count: `reasoning` is a tokenizer estimate of the
 * thinking text, capped at the output count (it is display only; billing prices all output alike).
 */
export function reportAnthropicUsage(counts: AnthropicUsageCounts, thinkingText: string): ReportedUsage | null {
  const { input_tokens: uncached, output_tokens: output } = counts;
  if (uncached === undefined || output === undefined) return null;
  const cached = counts.cache_read_input_tokens ?? 0;
  // The breakdown by lifetime, when given, is the more precise count; the total covers older API versions.
  const writes1h = counts.ephemeral_1h_input_tokens ?? 0;
  const writes = Math.max(counts.cache_creation_input_tokens ?? 0, (counts.ephemeral_5m_input_tokens ?? 0) + writes1h);
  const input = uncached + cached + writes;
  const reasoning = Math.min(countText(thinkingText), output);
  const cacheReported = counts.cache_creation_input_tokens !== undefined || counts.ephemeral_5m_input_tokens !== undefined;
  const tokens = { input, cachedInput: cached, output, reasoning, ...(writes > 0 ? { cacheWrite: writes, cacheWrite1h: writes1h } : {}) };
  return withModifiers(reportTokens(tokens, cacheReported ? writes : undefined), counts.modifiers);
}
