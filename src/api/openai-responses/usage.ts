// Usage in the OpenAI Responses convention (product.md §14, Billing): `input_tokens` includes the cached
// ones (`input_tokens_details.cached_tokens`), `output_tokens` includes reasoning
// (`output_tokens_details.reasoning_tokens`) — the same convention as chat's prompt/completion tokens,
// under other names. Read into the canonical counts for billing; written back with `cost` added.
import { nanoToUsd } from '../../billing/money.js';
import { isJsonObject, type JsonObject } from '../../json-object.js';
import type { Charge } from '../../pipeline/admission/reservation.js';
import type { ReportedUsage } from '../../providers/types.js';

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** A Responses `usage` object as billable counts; null when it carries none (the request is then estimated). */
export function readResponsesUsage(raw: unknown): ReportedUsage | null {
  if (!isJsonObject(raw)) return null;
  const input = count(raw.input_tokens);
  const output = count(raw.output_tokens);
  if (input === undefined || output === undefined) return null;
  const inputDetails = isJsonObject(raw.input_tokens_details) ? raw.input_tokens_details : undefined;
  const outputDetails = isJsonObject(raw.output_tokens_details) ? raw.output_tokens_details : undefined;
  const cachedInput = Math.min(count(inputDetails?.cached_tokens) ?? 0, input);
  const reasoning = Math.min(count(outputDetails?.reasoning_tokens) ?? 0, output);
  const cacheWrite = Math.min(count(inputDetails?.cache_write_tokens) ?? 0, input - cachedInput);
  const tokens = { input, cachedInput, output, reasoning };
  return { tokens: cacheWrite > 0 ? { ...tokens, cacheWrite } : tokens, openai: raw };
}

/**
 * The `usage` the client gets: the upstream's own object with `cost` when it was charged exactly, else
 * the counts that were charged (an estimate) in the same shape.
 */
export function responsesUsage(charge: Charge, reported: ReportedUsage | null): JsonObject {
  const cost = nanoToUsd(charge.cost);
  const { settlement } = charge;
  if (settlement.kind === 'exact' && reported) return { ...reported.openai, cost };
  const tokens = settlement.kind === 'release' ? { input: 0, cachedInput: 0, output: 0, reasoning: 0 } : settlement.tokens;
  return {
    input_tokens: tokens.input,
    input_tokens_details: { cached_tokens: tokens.cachedInput, cache_write_tokens: tokens.cacheWrite ?? 0 },
    output_tokens: tokens.output,
    output_tokens_details: { reasoning_tokens: tokens.reasoning },
    total_tokens: tokens.input + tokens.output,
    cost,
  };
}
