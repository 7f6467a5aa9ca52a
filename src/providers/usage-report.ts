// Canonical token counts → the ReportedUsage a translator hands the pipeline, with the OpenAI-shaped
// usage object clients receive (reasoning inside completion_tokens, as the convention defines it).
import type { PriceModifiers, TokenUsage } from '../billing/pricing.js';
import type { ReportedUsage } from './types.js';

/** Price modifiers as a reader gathers them from an answer, field by field (billing/pricing.ts PriceModifiers). */
export type ModifierReport = { -readonly [F in keyof PriceModifiers]?: PriceModifiers[F] };

/** `cacheWrites`: the cache-write count to show the client, when the upstream reported one (even 0). */
export function reportTokens(tokens: TokenUsage, cacheWrites: number | undefined = tokens.cacheWrite): ReportedUsage {
  return {
    tokens,
    openai: {
      prompt_tokens: tokens.input,
      completion_tokens: tokens.output,
      total_tokens: tokens.input + tokens.output,
      // cache_write_tokens only where the upstream reports cache writes.
      prompt_tokens_details: cacheWrites === undefined ? { cached_tokens: tokens.cachedInput } : { cached_tokens: tokens.cachedInput, cache_write_tokens: cacheWrites },
      completion_tokens_details: { reasoning_tokens: tokens.reasoning },
    },
  };
}

/**
 * The usage with the price modifiers the answer reported (a copy of them: the reader may keep gathering);
 * the same usage when it reported none. Only `tokens` changes: the client's usage object is untouched.
 */
export function withModifiers(usage: ReportedUsage, modifiers: ModifierReport | undefined): ReportedUsage {
  if (!modifiers || Object.keys(modifiers).length === 0) return usage;
  const copy: PriceModifiers = { ...modifiers, ...(modifiers.serverToolUses ? { serverToolUses: { ...modifiers.serverToolUses } } : {}) };
  return { ...usage, tokens: { ...usage.tokens, modifiers: copy } };
}
