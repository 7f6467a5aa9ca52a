// Money is an integer count of nano-dollars (1e-9 USD). These are the only conversions to and from
// decimal USD; nothing in billing touches floating point.

/** Nano-dollars: a safe integer. */
export type Nano = number;

export const NANO_PER_USD = 1_000_000_000n;

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

/** "12.5" → 12_500_000_000 nano. Undefined if not a decimal with at most 9 places or not a safe integer. */
export function usdToNano(value: number | string): Nano | undefined {
  const nano = parseDecimal(value, 9);
  if (nano === undefined) return undefined;
  if (nano > BigInt(Number.MAX_SAFE_INTEGER) || nano < -BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
  return Number(nano);
}

/** Nano → USD as a JSON number (the nearest double; exact for every amount a key can hold). */
export function nanoToUsd(nano: Nano): number {
  return nano / 1e9;
}

/** Nano → an exact decimal string, trailing zeros trimmed: 1_500_000_000 → "1.5". */
export function formatUsd(nano: Nano): string {
  const negative = nano < 0;
  const abs = BigInt(Math.abs(nano));
  const whole = abs / NANO_PER_USD;
  const fraction = (abs % NANO_PER_USD).toString().padStart(9, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}
