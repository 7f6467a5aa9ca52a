// Cache-write prices, long-context tiers and the per-request fee: exact integer sums, one rounding.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { affordableMaxTokens, priceUsage, sizeChatHold, sizeEmbeddingHold, sizeOutputStep, tierFor, type PriceRates } from '../../../src/billing/pricing.js';

const M = 1_000_000_000n; // $1 per 1M tokens, in nano-dollars per 1M tokens

/** Claude Sonnet-like: $3 in, $15 out, $0.30 cache reads, $3.75 5-minute writes, $6 1-hour writes. */
const SONNET: PriceRates = { input: 3n * M, output: 15n * M, cachedInput: 300_000_000n, cacheWrite: 3_750_000_000n, cacheWrite1h: 6n * M };

/** Gemini 2.5 Pro-like: $1.25 / $10 up to 200k input tokens, $2.50 / $15 above. */
const TIERED: PriceRates = {
  input: 1_250_000_000n,
  output: 10n * M,
  cachedInput: 310_000_000n,
  tiers: [{ aboveInputTokens: 200_000, input: 2_500_000_000n, output: 15n * M, cachedInput: 625_000_000n }],
};

describe('cache writes', () => {
  test('prices 5-minute and 1-hour cache writes apart from plain input and cache reads', () => {
    // 21 plain × 3 + 1000 reads × 0.30 + 2000 5m-writes × 3.75 + 1000 1h-writes × 6 + 12 out × 15 = 14_043 USD/1M
    const usage = { input: 4021, cachedInput: 1000, cacheWrite: 3000, cacheWrite1h: 1000, output: 12, reasoning: 0 };
    assert.equal(priceUsage(SONNET, usage), 14_043_000);
  });

  test('without a cache_write price, writes cost the input price (the old behaviour)', () => {
    const plain: PriceRates = { input: 3n * M, output: 15n * M, cachedInput: 300_000_000n };
    const usage = { input: 4021, cachedInput: 1000, cacheWrite: 3000, cacheWrite1h: 1000, output: 12, reasoning: 0 };
    assert.equal(priceUsage(plain, usage), priceUsage(plain, { input: 4021, cachedInput: 1000, output: 12, reasoning: 0 }));
  });

  test('clamps cache writes to the input that is not a cache read', () => {
    const usage = { input: 100, cachedInput: 60, cacheWrite: 500, cacheWrite1h: 900, output: 0, reasoning: 0 };
    // 60 reads × 0.30 + 40 1h-writes × 6 = 18 + 240 = 258_000 nano
    assert.equal(priceUsage(SONNET, usage), 258_000);
  });
});

describe('tiers', () => {
  test('chooses the tier strictly above its threshold', () => {
    assert.equal(tierFor(TIERED, 200_000), TIERED);
    assert.equal(tierFor(TIERED, 200_001), TIERED.tiers![0]);
  });

  test('settles a request whose real input crossed the boundary at the higher tier, for every token', () => {
    const below = priceUsage(TIERED, { input: 200_000, cachedInput: 0, output: 1000, reasoning: 0 });
    const above = priceUsage(TIERED, { input: 200_001, cachedInput: 0, output: 1000, reasoning: 0 });
    assert.equal(below, 250_000_000 + 10_000_000);
    assert.equal(above, 500_002_500 + 15_000_000);
  });

  test('holds at the tier the estimate falls in, and answers affordable_max_tokens at that tier', () => {
    assert.equal(sizeChatHold(TIERED, 200_000, 1000, 1), 260_000_000);
    assert.equal(sizeChatHold(TIERED, 250_000, 1000, 1), 625_000_000 + 15_000_000);
    // $0.64 available at 250k input: (640_000_000 − 625_000_000) nano / 15_000 nano per token = 1000.
    assert.equal(affordableMaxTokens(TIERED, 250_000, 1, 640_000_000, 64_000), 1000);
    assert.equal(sizeOutputStep(TIERED, 250_000, 100, 2), 3_000_000);
  });
});

describe('request fee', () => {
  const FEE: PriceRates = { input: 1n * M, output: 2n * M, cachedInput: 1n * M, request: 1_000_000n }; // $0.001 per request

  test('adds the fee once to the cost, inside the one rounding', () => {
    // 1 token × $1/1M = 1000 nano; + 1_000_000 nano fee.
    assert.equal(priceUsage(FEE, { input: 1, cachedInput: 0, output: 0, reasoning: 0 }), 1_001_000);
    // A sub-nano token cost rounds up once with the fee, not separately.
    const tiny: PriceRates = { input: 1n, output: 0n, cachedInput: 1n, request: 5n };
    assert.equal(priceUsage(tiny, { input: 1, cachedInput: 0, output: 0, reasoning: 0 }), 6);
  });

  test('holds the fee, and leaves it out of what max_tokens can buy', () => {
    assert.equal(sizeChatHold(FEE, 10, 100, 1), 10_000 + 200_000 + 1_000_000);
    assert.equal(sizeEmbeddingHold(FEE, 10), 1_010_000);
    assert.equal(affordableMaxTokens(FEE, 10, 1, 1_010_000 + 2000, 1000), 1);
    assert.equal(affordableMaxTokens(FEE, 10, 1, 1_009_999, 1000), 0);
  });
});
