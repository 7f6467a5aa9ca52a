// The `usage` object the OpenAI APIs (chat completions, embeddings) answer with: the upstream's own
// counts in the convention's shape when it reported them, else the gateway's estimate — and always
// `cost`, the USD charged for the request (product.md §4, rule 3).
import { nanoToUsd } from '../billing/money.js';
import type { JsonObject } from '../json-object.js';
import type { Charge } from '../pipeline/admission/reservation.js';
import type { ReportedUsage } from '../providers/types.js';

/** `completion`: the API has an output side (chat), whose estimate names completion_tokens. */
export function openaiUsage(charge: Charge, reported: ReportedUsage | null, completion: boolean): JsonObject {
  const cost = nanoToUsd(charge.cost);
  const { settlement } = charge;
  if (settlement.kind === 'exact' && reported) return { ...reported.openai, cost };
  const tokens = settlement.kind === 'release' ? { input: 0, output: 0 } : settlement.tokens;
  const usage: JsonObject = { prompt_tokens: tokens.input, total_tokens: tokens.input + tokens.output, cost };
  if (completion) usage.completion_tokens = tokens.output;
  return usage;
}
