// The output a chat completion may produce, for its hold: max_completion_tokens, else max_tokens, else the
// model's max_output_tokens — never more than the model's max_output_tokens — times `n` choices.
import type { ChatRequestBody } from '../../providers/types.js';
import type { OutputBudget } from '../../pipeline/client-api.js';

export function resolveMaxOutput(body: Readonly<Record<string, unknown>>, modelMaxOutput: number): number {
  const asked =
    typeof body.max_completion_tokens === 'number'
      ? body.max_completion_tokens
      : typeof body.max_tokens === 'number'
        ? body.max_tokens
        : modelMaxOutput;
  return Math.min(asked, modelMaxOutput);
}

export function chatOutputBudget(body: ChatRequestBody, modelMaxOutput: number | undefined): OutputBudget {
  return { maxOutput: resolveMaxOutput(body, modelMaxOutput!), choices: typeof body.n === 'number' ? body.n : 1 };
}

/** A clamp lowers the output limit the client used (max_completion_tokens, else max_tokens). */
export function withMaxOutput(body: ChatRequestBody, maxOutput: number): ChatRequestBody {
  const field = typeof body.max_completion_tokens === 'number' ? 'max_completion_tokens' : 'max_tokens';
  return { ...body, [field]: maxOutput };
}
