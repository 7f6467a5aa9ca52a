// Integer pricing: a request's cost and hold in nano-dollars, rounded up once per request.
// Rates are nano-dollars per 1M tokens (bigint), so any price with up to 9 decimals (USD per 1M) is exact.
import type { Nano } from './money.js';

const PER_MILLION = 1_000_000n;

export interface PriceRates {
  readonly input: bigint;
  readonly output: bigint;
  readonly cachedInput: bigint;
}

/** Token counts of one request. `output` already includes `reasoning` (reasoning tokens are output tokens). */
export interface TokenUsage {
  readonly input: number;
  readonly cachedInput: number;
  readonly output: number;
  readonly reasoning: number;
}

function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  if (numerator <= 0n) return 0n;
  return (numerator + denominator - 1n) / denominator;
}

/** Saturates at the largest safe integer: no balance can cover more, so such a hold is simply refused. */
function toNano(value: bigint): Nano {
  return value > MAX_NANO ? Number.MAX_SAFE_INTEGER : Number(value);
}

const MAX_NANO = BigInt(Number.MAX_SAFE_INTEGER);

/** Exact cost: uncached input at `input`, cached input at `cachedInput`, output (reasoning included) at `output`. */
export function priceUsage(rates: PriceRates, usage: TokenUsage): Nano {
  const cached = Math.min(Math.max(usage.cachedInput, 0), Math.max(usage.input, 0));
  const uncached = Math.max(usage.input, 0) - cached;
  const total =
    BigInt(uncached) * rates.input + BigInt(cached) * rates.cachedInput + BigInt(Math.max(usage.output, 0)) * rates.output;
  return toNano(ceilDiv(total, PER_MILLION));
}

/**
 * The output tokens a chat request may produce, for the hold: max_completion_tokens, else max_tokens,
 * else the model's max_output_tokens — never more than the model's max_output_tokens.
 */
export function resolveMaxOutput(
  body: Readonly<Record<string, unknown>>,
  modelMaxOutput: number,
): number {
  const asked =
    typeof body.max_completion_tokens === 'number'
      ? body.max_completion_tokens
      : typeof body.max_tokens === 'number'
        ? body.max_tokens
        : modelMaxOutput;
  return Math.min(asked, modelMaxOutput);
}

/** Hold = input_estimate × input + max_out × output × n. */
export function sizeChatHold(rates: PriceRates, inputTokens: number, maxOutput: number, n: number): Nano {
  return toNano(ceilDiv(BigInt(inputTokens) * rates.input + BigInt(maxOutput) * BigInt(n) * rates.output, PER_MILLION));
}

/** Embeddings hold their counted input tokens at the input price. */
export function sizeEmbeddingHold(rates: PriceRates, inputTokens: number): Nano {
  return toNano(ceilDiv(BigInt(inputTokens) * rates.input, PER_MILLION));
}

/**
 * The largest max_out whose hold fits `available` (0 when even the input does not fit), capped at the
 * model's max_output_tokens.
 */
export function affordableMaxTokens(
  rates: PriceRates,
  inputTokens: number,
  n: number,
  available: Nano,
  modelMaxOutput: number,
): number {
  const budget = BigInt(Math.max(available, 0)) * PER_MILLION - BigInt(inputTokens) * rates.input;
  if (budget < 0n) return 0;
  const perToken = rates.output * BigInt(n);
  if (perToken === 0n) return modelMaxOutput;
  const fits = budget / perToken;
  return fits > BigInt(modelMaxOutput) ? modelMaxOutput : Number(fits);
}
