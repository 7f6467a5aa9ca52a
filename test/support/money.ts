// Exact money for the end-to-end tests: the test config's prices, the charges they give, and USD ⇄ nano-dollars.

const NANO_DIGITS = 9;

/** Prices used by mockConfig, USD per 1M tokens — chosen so charges are exact small integers of nano-dollars. */
export const TEST_PRICES = { input: 1, output: 2, cachedInput: 0.5, embedding: 0.1 } as const;

/** Exact expected cost in nano-dollars for prompt/completion tokens at a model's price (USD per 1M). */
export function expectedCostNano(tokens: { prompt: number; completion: number; cached?: number }, price: { input: number; output?: number; cachedInput?: number }): number {
  const cached = tokens.cached ?? 0;
  // price per 1M tokens in USD → nano-dollars per token = price × 1000 (exact for ≤ 3 decimals).
  const perToken = (usd: number) => Math.round(usd * 1_000_000) / 1000; // nano per token, may be fractional
  const total = (tokens.prompt - cached) * perToken(price.input) + cached * perToken(price.cachedInput ?? price.input) + tokens.completion * perToken(price.output ?? 0);
  return Math.ceil(Math.round(total * 1000) / 1000);
}

/** Exact price in nano-dollars of chat usage at the test prices. */
export function chatCostNano(prompt: number, completion: number, cached = 0): number {
  return expectedCostNano({ prompt, completion, cached }, { input: TEST_PRICES.input, output: TEST_PRICES.output, cachedInput: TEST_PRICES.cachedInput });
}

/** Exact price in nano-dollars of embedding usage at the test price. */
export function embeddingCostNano(tokens: number): number {
  return expectedCostNano({ prompt: tokens, completion: 0 }, { input: TEST_PRICES.embedding });
}

/**
 * An exact USD decimal ("0.000123", "1e-7", or a JSON number, read through its shortest round-trip
 * decimal form — the text the server wrote) → integer nano-dollars. Throws on more than 9 decimals.
 */
export function usdToNano(value: number | string): number {
  const text = typeof value === 'number' ? String(value) : value.trim();
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) throw new Error(`not a decimal USD amount: ${JSON.stringify(value)}`);
  const [, sign = '', whole = '', fraction = '', exponent] = match;
  let digits = whole + fraction;
  let decimals = fraction.length - Number(exponent ?? 0);
  if (decimals < 0) {
    digits += '0'.repeat(-decimals);
    decimals = 0;
  }
  while (decimals > NANO_DIGITS && digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    decimals -= 1;
  }
  if (decimals > NANO_DIGITS) throw new Error(`USD amount ${text} has more than 9 decimals`);
  const nano = BigInt(digits || '0') * 10n ** BigInt(NANO_DIGITS - decimals);
  if (nano > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`USD amount ${text} is out of range`);
  return Number(sign === '-' ? -nano : nano);
}

/** Integer nano-dollars → an exact decimal USD string ("0.0115", "-0.000000001"). */
export function nanoToUsdString(nano: number): string {
  if (!Number.isSafeInteger(nano)) throw new Error(`not an integer nano amount: ${nano}`);
  const abs = BigInt(Math.abs(nano));
  const whole = abs / 1_000_000_000n;
  const fraction = (abs % 1_000_000_000n).toString().padStart(NANO_DIGITS, '0').replace(/0+$/, '');
  return `${nano < 0 ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}
