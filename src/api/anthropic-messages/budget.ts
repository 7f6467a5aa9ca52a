// The output a Messages request may produce, for its hold: its `max_tokens` (required; thinking lives
// inside it), never more than the model's max_output_tokens. A clamp (product.md §13, §14) lowers
// max_tokens, and an extended-thinking budget with it: the upstream requires budget_tokens < max_tokens
// and budget_tokens ≥ 1,024, so thinking that no longer fits is dropped.
import type { OutputBudget } from '../../pipeline/client-api.js';
import { isJsonObject } from '../../json-object.js';
import type { MessagesRequestBody } from './validate.js';

/** Anthropic's smallest extended-thinking budget. */
export const MIN_THINKING_BUDGET = 1_024;

export function messagesOutputBudget(body: MessagesRequestBody, modelMaxOutput: number | undefined): OutputBudget {
  return { maxOutput: Math.min(body.max_tokens, modelMaxOutput ?? body.max_tokens), choices: 1 };
}

/** The request with max_tokens lowered to `maxOutput` (a copy: its kept text no longer applies). */
export function withMaxTokens(body: MessagesRequestBody, maxOutput: number): MessagesRequestBody {
  const clamped: MessagesRequestBody = { ...body, max_tokens: maxOutput };
  const thinking = body.thinking;
  if (!isJsonObject(thinking) || thinking.type !== 'enabled' || typeof thinking.budget_tokens !== 'number') return clamped;
  if (thinking.budget_tokens < maxOutput) return clamped;
  if (maxOutput - 1 < MIN_THINKING_BUDGET) {
    delete clamped.thinking;
    return clamped;
  }
  return { ...clamped, thinking: { ...thinking, budget_tokens: maxOutput - 1 } };
}
