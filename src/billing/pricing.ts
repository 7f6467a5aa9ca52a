// Integer pricing: a request's cost and hold in nano-dollars, rounded up once per request.
// Rates are nano-dollars per 1M tokens (bigint), so any price with up to 9 decimals (USD per 1M) is exact.
import type { Nano } from './money.js';

const PER_MILLION = 1_000_000n;

/** One set of per-token prices (nano-dollars per 1M tokens). */
export interface PriceSet {
  readonly input: bigint;
  readonly output: bigint;
  readonly cachedInput: bigint;
  /** 5-minute (default-TTL) cache writes; `input` when unset. */
  readonly cacheWrite?: bigint;
  /** 1-hour cache writes; `cacheWrite` when unset. */
  readonly cacheWrite1h?: bigint;
}

/** Prices that apply when a request's input tokens are above `aboveInputTokens`. */
export interface PriceTier extends PriceSet {
  readonly aboveInputTokens: number;
}

export interface PriceRates extends PriceSet {
  /** A fixed fee per request, nano-dollars (not per token). */
  readonly request?: bigint;
  /** Long-context prices, strictly ascending by `aboveInputTokens` (config check enforces it). */
  readonly tiers?: readonly PriceTier[];
}

/**
 * Token counts of one request. `output` already includes `reasoning` (reasoning tokens are output tokens).
 * `input` includes cached reads and cache writes; `cacheWrite` counts all cache writes, `cacheWrite1h`
 * those of them written for one hour.
 */
export interface TokenUsage {
  readonly input: number;
  readonly cachedInput: number;
  readonly output: number;
  readonly reasoning: number;
  readonly cacheWrite?: number;
  readonly cacheWrite1h?: number;
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

const whole = (n: number | undefined): number => Math.max(n ?? 0, 0);

/** The price set for a request with `inputTokens` of input: the highest tier it is above, else the base prices. */
export function tierFor(rates: PriceRates, inputTokens: number): PriceSet {
  const tiers = rates.tiers;
  if (!tiers || tiers.length === 0) return rates;
  let chosen: PriceSet = rates;
  for (const tier of tiers) {
    if (inputTokens > tier.aboveInputTokens) chosen = tier;
    else break;
  }
  return chosen;
}

/** The per-request fee in the unit of a pre-rounding sum (nano-dollars × 1M). */
function requestFee(rates: PriceRates): bigint {
  return (rates.request ?? 0n) * PER_MILLION;
}

/**
 * Exact cost, one rounding: uncached input at `input`, cache reads at `cachedInput`, cache writes at
 * `cacheWrite` / `cacheWrite1h`, output (reasoning included) at `output` — all at the tier the input
 * falls in — plus the per-request fee.
 */
export function priceUsage(rates: PriceRates, usage: TokenUsage): Nano {
  const input = whole(usage.input);
  const set = tierFor(rates, input);
  const cached = Math.min(whole(usage.cachedInput), input);
  const writes = Math.min(whole(usage.cacheWrite), input - cached);
  const writes1h = Math.min(whole(usage.cacheWrite1h), writes);
  const uncached = input - cached - writes;
  const cacheWrite = set.cacheWrite ?? set.input;
  const total =
    BigInt(uncached) * set.input +
    BigInt(cached) * set.cachedInput +
    BigInt(writes - writes1h) * cacheWrite +
    BigInt(writes1h) * (set.cacheWrite1h ?? cacheWrite) +
    BigInt(whole(usage.output)) * set.output +
    requestFee(rates);
  return toNano(ceilDiv(total, PER_MILLION));
}

/**
 * The part of a prompt a request asks to write to the prompt cache (Anthropic's `cache_control`: the
 * prompt up to its last marker), and whether any marker asks for one hour — held at the cache-write price.
 */
export interface CacheWriteHold {
  readonly tokens: number;
  readonly oneHour: boolean;
}

/**
 * The input's part of a hold (× 1M): the input at `input`, except a cache-write prefix at its write
 * price — never below `input`, since a prefix the upstream does not cache is billed as plain input.
 */
function heldInput(set: PriceSet, inputTokens: number, cacheWrite: CacheWriteHold | undefined): bigint {
  if (!cacheWrite || cacheWrite.tokens <= 0) return BigInt(inputTokens) * set.input;
  const written = Math.min(cacheWrite.tokens, inputTokens);
  const write = set.cacheWrite ?? set.input;
  const rate = cacheWrite.oneHour ? (set.cacheWrite1h ?? write) : write;
  return BigInt(inputTokens - written) * set.input + BigInt(written) * (rate > set.input ? rate : set.input);
}

/**
 * Hold = input_estimate × input (a cache-write prefix at its write price) + max_out × output × n (+ the
 * request fee), at the tier the estimate falls in.
 */
export function sizeChatHold(rates: PriceRates, inputTokens: number, maxOutput: number, n: number, cacheWrite?: CacheWriteHold): Nano {
  const set = tierFor(rates, inputTokens);
  return toNano(ceilDiv(heldInput(set, inputTokens, cacheWrite) + BigInt(maxOutput) * BigInt(n) * set.output + requestFee(rates), PER_MILLION));
}

/** What `outputTokens` more output (for each of `n` choices) adds to a hold: a growing hold's step. */
export function sizeOutputStep(rates: PriceRates, inputTokens: number, outputTokens: number, n: number): Nano {
  return toNano(ceilDiv(BigInt(outputTokens) * BigInt(n) * tierFor(rates, inputTokens).output, PER_MILLION));
}

/** Embeddings hold their counted input tokens at the input price (+ the request fee). */
export function sizeEmbeddingHold(rates: PriceRates, inputTokens: number): Nano {
  return toNano(ceilDiv(BigInt(inputTokens) * tierFor(rates, inputTokens).input + requestFee(rates), PER_MILLION));
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
  cacheWrite?: CacheWriteHold,
): number {
  const set = tierFor(rates, inputTokens);
  const budget = BigInt(Math.max(available, 0)) * PER_MILLION - heldInput(set, inputTokens, cacheWrite) - requestFee(rates);
  if (budget < 0n) return 0;
  const perToken = set.output * BigInt(n);
  if (perToken === 0n) return modelMaxOutput;
  const fits = budget / perToken;
  return fits > BigInt(modelMaxOutput) ? modelMaxOutput : Number(fits);
}
