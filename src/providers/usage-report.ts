// Canonical token counts → the ReportedUsage a translator hands the pipeline, with the OpenAI-shaped
// usage object clients receive (reasoning inside completion_tokens, as the convention defines it).
import type { TokenUsage } from '../billing/pricing.js';
import type { ReportedUsage } from './types.js';

export function reportTokens(tokens: TokenUsage): ReportedUsage {
  return {
    tokens,
    openai: {
      prompt_tokens: tokens.input,
      completion_tokens: tokens.output,
      total_tokens: tokens.input + tokens.output,
      prompt_tokens_details: { cached_tokens: tokens.cachedInput },
      completion_tokens_details: { reasoning_tokens: tokens.reasoning },
    },
  };
}
