// A translated answer's usage in the Responses convention (product.md §14, Billing), written from the
// canonical counts the candidate's chat adapter read — never from the chat-shaped object: `input_tokens`
// includes the cached ones (`input_tokens_details.cached_tokens`), `output_tokens` includes reasoning
// (`output_tokens_details.reasoning_tokens`). The counts billed are the same ones, untouched: the usage is
// billed once, whatever name it goes back under.
import type { JsonObject } from '../../../json-object.js';
import type { ReportedUsage } from '../../../providers/types.js';

/** The usage with its client-facing object in the Responses shape (usage.ts's responsesUsage adds `cost`). */
export function asResponsesUsage(usage: ReportedUsage | null): ReportedUsage | null {
  if (!usage) return null;
  const { tokens } = usage;
  const openai: JsonObject = {
    input_tokens: tokens.input,
    input_tokens_details: { cached_tokens: tokens.cachedInput, cache_write_tokens: tokens.cacheWrite ?? 0 },
    output_tokens: tokens.output,
    output_tokens_details: { reasoning_tokens: tokens.reasoning },
    total_tokens: tokens.input + tokens.output,
  };
  return { tokens, openai };
}
