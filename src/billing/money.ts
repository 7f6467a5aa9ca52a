// Money is an integer count of nano-dollars (1e-9 USD). These are the only conversions to and from
// decimal USD; nothing in billing touches floating point.

/** Nano-dollars: a safe integer. */
export type Nano = number;

export const NANO_PER_USD = 1_000_000_000n;

/**
 * The largest amount the ledger holds: 2^23 USD ($8,388,608), in nano-dollars. It bounds every amount an
 * operator moves (a top-up, an adjustment, an opening balance, a budget) and every key's balance. Why
 * this figure (docs/adr/0032-money-guard-rails.md): money leaves the gateway as a JSON number, which every
 * client (the dashboard's JavaScript, the SDKs, Python's json) reads as an IEEE double, and a double tells
 * every nano-dollar apart only below 2^23 dollars — above it, 8388608.000000001 reads back as
 * 8388608.000000002. It is also inside the safe integers (2^53 nano ≈ $9,007,199) that Nano is.
 */
export const MAX_NANO: Nano = 8_388_608_000_000_000;

/** The maximum as an operator would type it: "8388608". */
export const MAX_USD = '8388608';

const MAX_EXPONENT = 40;
const MAX_DIGITS = 60;

/**
 * Parses a decimal amount ("12", "0.5", "1e-3", 0.15) to an exact scaled bigint with `scale` decimals.
 * Numbers are read through their shortest round-trip decimal form, which is what the user wrote.
 * Returns undefined when the value is not a finite decimal or needs more than `scale` decimals.
 */
export function parseDecimal(value: number | string, scale: number): bigint | undefined {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value.trim();
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match) return undefined;
  const [, sign = '', whole = '', fraction = '', exponentText] = match;
  if (whole === '' && fraction === '') return undefined;
  // No amount the gateway handles needs more; bounding first keeps "1e999999999" from building a huge string.
  if (Math.abs(Number(exponentText ?? 0)) > MAX_EXPONENT || whole.length + fraction.length > MAX_DIGITS) return undefined;
  let digits = (whole + fraction).replace(/^0+(?=\d)/, '');
  let decimals = fraction.length - Number(exponentText ?? 0);
  if (decimals < 0) {
    digits += '0'.repeat(-decimals);
    decimals = 0;
  }
  // Trailing zeros beyond the scale are harmless ("0.1500000000").
  while (decimals > scale && digits.endsWith('0')) {
    digits = digits.slice(0, -1) || '0';
    decimals -= 1;
  }
  if (decimals > scale) return undefined;
  const scaled = BigInt(digits || '0') * 10n ** BigInt(scale - decimals);
  return sign === '-' ? -scaled : scaled;
}

/**
 * Nano → USD as a JSON number: the nearest double, whose shortest decimal form (what JSON.stringify
 * writes) is the exact amount for every |nano| ≤ MAX_NANO.
 */
export function nanoToUsd(nano: Nano): number {
  return nano / 1e9;
}

/** What an amount an operator typed or sent comes to: its nano-dollars, or why it is refused. */
export type AmountReading =
  | { readonly ok: true; readonly nano: Nano }
  | { readonly ok: false; readonly reason: 'not_a_decimal' }
  | { readonly ok: false; readonly reason: 'over_maximum'; readonly nano: bigint };

/** Reads a USD amount exactly and holds it to the ledger's maximum (either sign: |amount| ≤ MAX_NANO). */
export function readUsdAmount(value: number | string): AmountReading {
  const nano = parseDecimal(value, 9);
  if (nano === undefined) return { ok: false, reason: 'not_a_decimal' };
  if (nano > BigInt(MAX_NANO) || nano < -BigInt(MAX_NANO)) return { ok: false, reason: 'over_maximum', nano };
  return { ok: true, nano: Number(nano) };
}

/** "12.5" → 12_500_000_000 nano. Undefined if not a decimal with at most 9 places or past ±MAX_NANO. */
export function usdToNano(value: number | string): Nano | undefined {
  const reading = readUsdAmount(value);
  return reading.ok ? reading.nano : undefined;
}

/** Nano → an exact decimal string, trailing zeros trimmed: 1_500_000_000 → "1.5". Any size as a bigint. */
export function formatUsd(nano: Nano | bigint): string {
  const negative = nano < 0;
  const abs = typeof nano === 'bigint' ? (negative ? -nano : nano) : BigInt(Math.abs(nano));
  const whole = abs / NANO_PER_USD;
  const fraction = (abs % NANO_PER_USD).toString().padStart(9, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}
