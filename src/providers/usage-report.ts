// Canonical token counts → the ReportedUsage a translator hands the pipeline, with the OpenAI-shaped
// usage object clients receive (reasoning inside completion_tokens, as the convention defines it).
import type { TokenUsage } from '../billing/pricing.js';
import type { ReportedUsage } from './types.js';

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
