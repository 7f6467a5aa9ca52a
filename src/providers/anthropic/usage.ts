// Reads Anthropic usage counters into billable counts and the OpenAI-shaped usage object.
import { countText } from '../../tokens/count-text.js';
import { isJsonObject } from '../../json-object.js';
import type { ReportedUsage } from '../types.js';
import { reportTokens } from '../usage-report.js';

const COUNTERS = ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const;
/** usage.cache_creation: the cache writes by lifetime (5-minute and 1-hour writes are priced apart). */
const CACHE_CREATION = ['ephemeral_5m_input_tokens', 'ephemeral_1h_input_tokens'] as const;

/** Anthropic's counters as last reported: each field keeps the last value seen (never a sum). */
export type AnthropicUsageCounts = Partial<Record<(typeof COUNTERS)[number] | (typeof CACHE_CREATION)[number], number>>;

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
  if (!isJsonObject(raw.cache_creation)) return;
  for (const name of CACHE_CREATION) {
    const value = count(raw.cache_creation[name]);
    if (value !== undefined) counts[name] = value;
  }
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
  return reportTokens(tokens, cacheReported ? writes : undefined);
}
