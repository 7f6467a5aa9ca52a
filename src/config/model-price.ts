// A model's `price:` block → exact integer rates (billing/pricing) and the prices shown in the model list.
// Each tier is resolved like the base prices: cached_input and cache_write default to its own input,
// cache_write_1h to its own cache_write; tiers must rise strictly by above_input_tokens. The modifiers read
// from a response (product.md §14) are resolved the same way: `fast` is a price set of its own,
// `geo_multipliers` and `tier_multipliers` exact positive multipliers (billionths), `per_call` USD per use.
import { parseDecimal } from '../billing/money.js';
import { MULTIPLIER_ONE, type PriceRates, type PriceSet, type PriceTier } from '../billing/pricing.js';
import type { RawConfig } from './schema.js';
import type { DisplayPrice } from './types.js';

type RawPrice = RawConfig['models'][string]['price'];
type RawPriceSet = Pick<RawPrice, 'input' | 'output' | 'cached_input' | 'cache_write' | 'cache_write_1h'>;

/** Far above any real surcharge (Anthropic's fast mode is 6×): a larger one is a typo, not a price. */
const MAX_MULTIPLIER = 1000n;

function toRate(value: number | string | undefined, fallback: bigint | undefined, where: string, problems: string[], unit = 'USD per 1M tokens'): bigint | undefined {
  if (value === undefined) return fallback;
  const rate = parseDecimal(value, 9);
  if (rate === undefined) problems.push(`${where}: must be a decimal with at most 9 decimal places (${unit})`);
  return rate;
}

function priceSetOf(raw: RawPriceSet, at: (key: string) => string, problems: string[]): PriceSet {
  const input = toRate(raw.input, 0n, at('input'), problems) ?? 0n;
  const output = toRate(raw.output, 0n, at('output'), problems) ?? 0n;
  const cachedInput = toRate(raw.cached_input, input, at('cached_input'), problems) ?? input;
  const cacheWrite = toRate(raw.cache_write, input, at('cache_write'), problems) ?? input;
  const cacheWrite1h = toRate(raw.cache_write_1h, cacheWrite, at('cache_write_1h'), problems) ?? cacheWrite;
  return { input, output, cachedInput, cacheWrite, cacheWrite1h };
}

const numberOf = (value: number | string | undefined) => (value === undefined ? undefined : Number(value));

/** Response value → exact multiplier in billionths, each in (0, 1000]. */
function multipliersOf(raw: Readonly<Record<string, number | string>> | undefined, where: (key: string) => string, problems: string[]): Map<string, bigint> | undefined {
  if (raw === undefined) return undefined;
  const table = new Map<string, bigint>();
  for (const [value, text] of Object.entries(raw)) {
    const multiplier = parseDecimal(text, 9);
    if (multiplier === undefined || multiplier <= 0n || multiplier > MAX_MULTIPLIER * MULTIPLIER_ONE) {
      problems.push(`${where(value)}: must be a multiplier above 0 and at most ${MAX_MULTIPLIER}, with at most 9 decimal places (1.1 for +10%)`);
    } else table.set(value, multiplier);
  }
  return table;
}

/** Server tool → nano-dollars per use. */
function perCallOf(raw: Readonly<Record<string, number | string>> | undefined, where: (key: string) => string, problems: string[]): Map<string, bigint> | undefined {
  if (raw === undefined) return undefined;
  const table = new Map<string, bigint>();
  for (const [tool, text] of Object.entries(raw)) {
    const fee = toRate(text, undefined, where(tool), problems, 'USD per use');
    if (fee !== undefined) table.set(tool, fee);
  }
  return table;
}

const numbersOf = (raw: Readonly<Record<string, number | string>>) => Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, Number(v)]));

const CHAT_ONLY = ['output', 'cached_input', 'cache_write', 'cache_write_1h', 'tiers', 'fast', 'geo_multipliers', 'tier_multipliers', 'per_call'] as const;

function displayOf(raw: RawPriceSet): Record<string, number> {
  const out: Record<string, number> = {};
  for (const key of ['input', 'output', 'cached_input', 'cache_write', 'cache_write_1h'] as const) {
    const value = numberOf(raw[key]);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/** Undefined when a problem was found (each pushed to `problems` with its path). */
export function normalisePrice(
  raw: RawPrice,
  type: 'chat' | 'embedding',
  at: (...keys: (string | number)[]) => string,
  problems: string[],
): { rates: PriceRates; display: DisplayPrice } | undefined {
  const before = problems.length;
  if (type === 'embedding') {
    for (const key of CHAT_ONLY) {
      if (raw[key] !== undefined) problems.push(`${at('price', key)}: embedding models have an input price (and an optional request fee) only`);
    }
  }
  const base = priceSetOf(raw, (key) => at('price', key), problems);
  // The fee is USD per request: nano-dollars, exact to 9 decimals.
  const request = toRate(raw.request, undefined, at('price', 'request'), problems, 'USD per request');
  const tiers: PriceTier[] = [];
  (raw.tiers ?? []).forEach((tier, index) => {
    const where = (key: string) => at('price', 'tiers', index, key);
    if (type === 'chat' && tier.output === undefined) problems.push(`${where('output')}: required for chat models`);
    const previous = tiers[tiers.length - 1];
    if (previous && tier.above_input_tokens <= previous.aboveInputTokens) {
      problems.push(`${where('above_input_tokens')}: tiers must be in strictly increasing order of above_input_tokens (${tier.above_input_tokens} follows ${previous.aboveInputTokens})`);
    }
    tiers.push({ aboveInputTokens: tier.above_input_tokens, ...priceSetOf(tier, where, problems) });
  });
  const fast = raw.fast ? priceSetOf(raw.fast, (key) => at('price', 'fast', key), problems) : undefined;
  const geoMultipliers = multipliersOf(raw.geo_multipliers, (key) => at('price', 'geo_multipliers', key), problems);
  const tierMultipliers = multipliersOf(raw.tier_multipliers, (key) => at('price', 'tier_multipliers', key), problems);
  const perCall = perCallOf(raw.per_call, (key) => at('price', 'per_call', key), problems);
  if (problems.length > before) return undefined;
  const display: Record<string, unknown> = displayOf(raw);
  if (raw.request !== undefined) display.request = Number(raw.request);
  if (raw.tiers && raw.tiers.length > 0) display.tiers = raw.tiers.map((tier) => ({ above_input_tokens: tier.above_input_tokens, ...displayOf(tier) }));
  if (raw.fast) display.fast = displayOf(raw.fast);
  if (raw.geo_multipliers) display.geo_multipliers = numbersOf(raw.geo_multipliers);
  if (raw.tier_multipliers) display.tier_multipliers = numbersOf(raw.tier_multipliers);
  if (raw.per_call) display.per_call = numbersOf(raw.per_call);
  return {
    rates: {
      ...base,
      ...(request !== undefined ? { request } : {}),
      ...(tiers.length > 0 ? { tiers } : {}),
      ...(fast ? { fast } : {}),
      ...(geoMultipliers ? { geoMultipliers } : {}),
      ...(tierMultipliers ? { tierMultipliers } : {}),
      ...(perCall ? { perCall } : {}),
    },
    display: display as unknown as DisplayPrice,
  };
}
