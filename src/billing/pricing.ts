// Integer pricing: a request's cost and hold in nano-dollars, rounded up once per request.
// Rates are nano-dollars per 1M tokens (bigint), so any price with up to 9 decimals (USD per 1M) is exact.
// Multipliers are billionths (bigint), so any multiplier with up to 9 decimals is exact too: a request's
// token sum is multiplied by them before its one rounding (docs/adr/0040-agent-sessions-and-price-modifiers.md).
import type { Nano } from './money.js';

const PER_MILLION = 1_000_000n;
/** A multiplier of 1, in billionths. */
export const MULTIPLIER_ONE = 1_000_000_000n;
const MULTIPLIER_SQUARED = MULTIPLIER_ONE * MULTIPLIER_ONE;

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
  /** The prices of an answer served at `speed: "fast"` (whatever the input's size: no long-context tiers). */
  readonly fast?: PriceSet;
  /** `inference_geo` value → multiplier of the token prices, in billionths (1.1 → 1_100_000_000n). */
  readonly geoMultipliers?: ReadonlyMap<string, bigint>;
  /** `service_tier` value → multiplier of the token prices, in billionths. */
  readonly tierMultipliers?: ReadonlyMap<string, bigint>;
  /** Server tool name (`web_search`) → nano-dollars per use. */
  readonly perCall?: ReadonlyMap<string, bigint>;
}

/**
 * What the upstream's answer says about how it was served — read by the usage readers from the response,
 * never assumed. Each changes the price only through the model's config: an unknown speed, geo, tier or
 * tool prices as if it were not there.
 */
export interface PriceModifiers {
  /** `speed` as reported: "fast" prices at the model's `fast` set (when it has one). */
  readonly speed?: string;
  /** `inference_geo` as reported: `geoMultipliers[geo]` scales the token prices. */
  readonly geo?: string;
  /** `service_tier` as reported: `tierMultipliers[tier]` scales the token prices. */
  readonly tier?: string;
  /**
   * The model the upstream says answered (its response's `model`). When it is not the model asked for,
   * the settlement prices at that model's rates if the config knows it (pipeline/admission/reservation.ts).
   */
  readonly servedModel?: string;
  /** Uses of server tools by name (`{web_search: 2}`), priced by `perCall`. */
  readonly serverToolUses?: Readonly<Record<string, number>>;
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
  /** How the answer was served (speed, geo, tier, model, server tools), as the upstream reported it. */
  readonly modifiers?: PriceModifiers;
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

/** A multiplier the answer selects (billionths); 1 when the answer names none or the config has none for it. */
function multiplierOf(table: ReadonlyMap<string, bigint> | undefined, value: string | undefined): bigint {
  return (value !== undefined ? table?.get(value) : undefined) ?? MULTIPLIER_ONE;
}

/** Server-tool fees in the unit of a pre-rounding sum (nano-dollars × 1M): uses × `perCall`, for priced tools. */
function perCallFees(rates: PriceRates, uses: Readonly<Record<string, number>> | undefined): bigint {
  if (!uses || !rates.perCall) return 0n;
  let fees = 0n;
  for (const [tool, count] of Object.entries(uses)) {
    const price = rates.perCall.get(tool);
    if (price !== undefined) fees += BigInt(whole(Number.isSafeInteger(count) ? count : 0)) * price;
  }
  return fees * PER_MILLION;
}

/**
 * Exact cost, one rounding: uncached input at `input`, cache reads at `cachedInput`, cache writes at
 * `cacheWrite` / `cacheWrite1h`, output (reasoning included) at `output` — all at the tier the input
 * falls in, or at the `fast` set when the answer says `speed: "fast"` — times the multipliers of the
 * answer's `inference_geo` and `service_tier`, plus the per-request fee and the server tools' per-use
 * fees (never multiplied). The served model is the caller's to resolve: `rates` are the prices it chose.
 */
export function priceUsage(rates: PriceRates, usage: TokenUsage): Nano {
  const modifiers = usage.modifiers;
  const input = whole(usage.input);
  const set = modifiers?.speed === 'fast' && rates.fast ? rates.fast : tierFor(rates, input);
  const cached = Math.min(whole(usage.cachedInput), input);
  const writes = Math.min(whole(usage.cacheWrite), input - cached);
  const writes1h = Math.min(whole(usage.cacheWrite1h), writes);
  const uncached = input - cached - writes;
  const cacheWrite = set.cacheWrite ?? set.input;
  const tokens =
    BigInt(uncached) * set.input +
    BigInt(cached) * set.cachedInput +
    BigInt(writes - writes1h) * cacheWrite +
    BigInt(writes1h) * (set.cacheWrite1h ?? cacheWrite) +
    BigInt(whole(usage.output)) * set.output;
  const fees = requestFee(rates) + perCallFees(rates, modifiers?.serverToolUses);
  const geo = multiplierOf(rates.geoMultipliers, modifiers?.geo);
  const tier = multiplierOf(rates.tierMultipliers, modifiers?.tier);
  if (geo === MULTIPLIER_ONE && tier === MULTIPLIER_ONE) return toNano(ceilDiv(tokens + fees, PER_MILLION));
  // Both multipliers are billionths: the sum is carried at 10^18 times its unit until the one rounding.
  return toNano(ceilDiv(tokens * geo * tier + fees * MULTIPLIER_SQUARED, PER_MILLION * MULTIPLIER_SQUARED));
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
