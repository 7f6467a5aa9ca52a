// Integer pricing: costs and holds in nano-dollars, rounded up once per request.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  affordableMaxTokens,
  priceUsage,
  sizeChatHold,
  sizeEmbeddingHold,
  type PriceRates,
} from '../../../src/billing/pricing.js';

/** Rates are nano-dollars per 1M tokens: $0.15 / 1M = 150_000_000n. */
const GPT_4O_MINI: PriceRates = { input: 150_000_000n, output: 600_000_000n, cachedInput: 75_000_000n };

function rates(input: bigint, output: bigint, cachedInput: bigint = input): PriceRates {
  return { input, output, cachedInput };
}

describe('priceUsage', () => {
  test('charges input and output tokens at their prices, exactly', () => {
    // 1000 × $0.15/1M + 200 × $0.60/1M = $0.00015 + $0.00012 = 270_000 nano
    assert.equal(priceUsage(GPT_4O_MINI, { input: 1000, cachedInput: 0, output: 200, reasoning: 0 }), 270_000);
  });

  test('charges cached input tokens at the cached price and the rest at the input price', () => {
    // 600 × 0.15 + 400 × 0.075 + 200 × 0.60 (per 1M) = 90_000 + 30_000 + 120_000 nano
    assert.equal(priceUsage(GPT_4O_MINI, { input: 1000, cachedInput: 400, output: 200, reasoning: 0 }), 240_000);
  });

  test('clamps a cached count above the input count to the input count', () => {
    // All 100 input tokens cached: 100 × 0.075 / 1M = 7_500 nano, never a negative uncached part.
    assert.equal(priceUsage(GPT_4O_MINI, { input: 100, cachedInput: 500, output: 0, reasoning: 0 }), 7_500);
  });

  test('treats reasoning tokens as already inside output (they are not charged twice)', () => {
    const without = priceUsage(GPT_4O_MINI, { input: 10, cachedInput: 0, output: 300, reasoning: 0 });
    const withReasoning = priceUsage(GPT_4O_MINI, { input: 10, cachedInput: 0, output: 300, reasoning: 250 });
    assert.equal(without, 181_500);
    assert.equal(withReasoning, 181_500);
  });

  test('rounds a fraction of a nano-dollar up to one nano-dollar', () => {
    // 1 token at $0.0001 / 1M = 0.1 nano → 1 nano
    assert.equal(priceUsage(rates(100_000n, 0n), { input: 1, cachedInput: 0, output: 0, reasoning: 0 }), 1);
  });

  test('rounds once per request, not once per token class', () => {
    // 0.1 nano of input + 0.1 nano of output = 0.2 nano → 1 (per-class rounding would give 2)
    assert.equal(priceUsage(rates(100_000n, 100_000n), { input: 1, cachedInput: 0, output: 1, reasoning: 0 }), 1);
    // 0.5 + 0.5 + 0.5 nano = 1.5 → 2 (per-class rounding would give 3)
    const half = rates(500_000n, 500_000n, 500_000n);
    assert.equal(priceUsage(half, { input: 2, cachedInput: 1, output: 1, reasoning: 0 }), 2);
  });

  test('does not round an exact amount up', () => {
    // 10 tokens at $0.0001/1M = exactly 1 nano
    assert.equal(priceUsage(rates(100_000n, 0n), { input: 10, cachedInput: 0, output: 0, reasoning: 0 }), 1);
    assert.equal(priceUsage(rates(100_000n, 0n), { input: 11, cachedInput: 0, output: 0, reasoning: 0 }), 2);
  });

  test('is exact for prices with 3 decimals per 1M tokens', () => {
    // $1.234 / 1M input, $4.567 / 1M output: 1 token = 1_234 nano / 4_567 nano, no rounding at all
    const r = rates(1_234_000_000n, 4_567_000_000n, 0n);
    assert.equal(priceUsage(r, { input: 7, cachedInput: 0, output: 3, reasoning: 0 }), 7 * 1_234 + 3 * 4_567);
    assert.equal(priceUsage(rates(1_000_000n, 0n), { input: 1, cachedInput: 0, output: 0, reasoning: 0 }), 1);
  });

  test('costs nothing for zero tokens and treats negative counts as zero', () => {
    assert.equal(priceUsage(GPT_4O_MINI, { input: 0, cachedInput: 0, output: 0, reasoning: 0 }), 0);
    assert.equal(priceUsage(GPT_4O_MINI, { input: -5, cachedInput: -1, output: -7, reasoning: 0 }), 0);
  });

  test('stays exact for a large request beyond float precision of the intermediate product', () => {
    // 3_000_000 input at $3/1M + 64_000 output at $15/1M = $9 + $0.96
    const sonnet = rates(3_000_000_000n, 15_000_000_000n, 300_000_000n);
    assert.equal(priceUsage(sonnet, { input: 3_000_000, cachedInput: 0, output: 64_000, reasoning: 0 }), 9_960_000_000);
  });
});

describe('sizeChatHold', () => {
  test('holds input plus max_tokens at the output price', () => {
    // 1000 × 0.15 + 500 × 0.60 per 1M = 150_000 + 300_000 nano
    assert.equal(sizeChatHold(GPT_4O_MINI, 1000, 500, 1), 450_000);
  });

  test('multiplies the output reservation by n', () => {
    // 1000 × 0.15 + 500 × 3 × 0.60 per 1M = 150_000 + 900_000
    assert.equal(sizeChatHold(GPT_4O_MINI, 1000, 500, 3), 1_050_000);
  });

  test('holds the input alone when max_out is 0', () => {
    assert.equal(sizeChatHold(GPT_4O_MINI, 1000, 0, 1), 150_000);
  });

  test('rounds the whole hold up once', () => {
    assert.equal(sizeChatHold(rates(100_000n, 100_000n), 1, 1, 1), 1);
    assert.equal(sizeChatHold(rates(100_000n, 100_000n), 5, 6, 1), 2);
  });

  test('ignores the cached price (the hold cannot know what will be cached)', () => {
    assert.equal(sizeChatHold(rates(150_000_000n, 600_000_000n, 0n), 1000, 500, 1), 450_000);
  });
});

describe('sizeChatHold with a cache-write prefix (Anthropic cache_control)', () => {
  // $3 input, $15 output, $3.75 5-minute writes, $6 1-hour writes (nano per 1M tokens).
  const CLAUDE: PriceRates = { input: 3_000_000_000n, output: 15_000_000_000n, cachedInput: 300_000_000n, cacheWrite: 3_750_000_000n, cacheWrite1h: 6_000_000_000n };

  test('holds the prefix at the 5-minute write price and the rest at the input price', () => {
    // 600 × 3.75 + 400 × 3 + 100 × 15 per 1M = 2_250_000 + 1_200_000 + 1_500_000
    assert.equal(sizeChatHold(CLAUDE, 1000, 100, 1, { tokens: 600, oneHour: false }), 4_950_000);
  });

  test('holds the prefix at the 1-hour write price when a marker asks for one hour', () => {
    // 600 × 6 + 400 × 3 + 100 × 15 per 1M
    assert.equal(sizeChatHold(CLAUDE, 1000, 100, 1, { tokens: 600, oneHour: true }), 6_300_000);
  });

  test('never holds a prefix below the input price, nor more of it than the input', () => {
    const cheapWrites: PriceRates = { ...CLAUDE, cacheWrite: 1n, cacheWrite1h: 1n };
    assert.equal(sizeChatHold(cheapWrites, 1000, 100, 1, { tokens: 600, oneHour: true }), sizeChatHold(cheapWrites, 1000, 100, 1));
    assert.equal(sizeChatHold(CLAUDE, 1000, 0, 1, { tokens: 5000, oneHour: false }), 3_750_000);
  });

  test('affordableMaxTokens leaves the prefix its write price', () => {
    const cacheWrite = { tokens: 600, oneHour: true };
    const hold = sizeChatHold(CLAUDE, 1000, 100, 1, cacheWrite);
    assert.equal(affordableMaxTokens(CLAUDE, 1000, 1, hold, 4000, cacheWrite), 100);
    assert.equal(affordableMaxTokens(CLAUDE, 1000, 1, hold - 1, 4000, cacheWrite), 99);
  });
});

describe('sizeEmbeddingHold', () => {
  test('holds the counted input tokens at the input price', () => {
    // 1234 × $0.02 / 1M = 24_680 nano
    assert.equal(sizeEmbeddingHold(rates(20_000_000n, 0n), 1234), 24_680);
  });

  test('rounds a fractional hold up', () => {
    assert.equal(sizeEmbeddingHold(rates(100_000n, 0n), 3), 1);
    assert.equal(sizeEmbeddingHold(rates(20_000_000n, 0n), 0), 0);
  });
});

describe('affordableMaxTokens', () => {
  test('is the largest max_out whose hold fits the available balance', () => {
    // available $0.001 = 1_000_000 nano; input 1000 costs 150_000; (1_000_000 − 150_000) / 600 per token = 1416.67
    const affordable = affordableMaxTokens(GPT_4O_MINI, 1000, 1, 1_000_000, 16_384);
    assert.equal(affordable, 1416);
    assert.ok(sizeChatHold(GPT_4O_MINI, 1000, affordable, 1) <= 1_000_000);
    assert.ok(sizeChatHold(GPT_4O_MINI, 1000, affordable + 1, 1) > 1_000_000);
  });

  test('divides the output budget among n choices', () => {
    assert.equal(affordableMaxTokens(GPT_4O_MINI, 1000, 4, 1_000_000, 16_384), 354);
  });

  test('is 0 when the input alone does not fit', () => {
    // input 1000 costs 150_000 nano; only 149_999 available
    assert.equal(affordableMaxTokens(GPT_4O_MINI, 1000, 1, 149_999, 16_384), 0);
    assert.equal(affordableMaxTokens(GPT_4O_MINI, 1000, 1, 0, 16_384), 0);
    assert.equal(affordableMaxTokens(GPT_4O_MINI, 1000, 1, -5_000, 16_384), 0);
  });

  test('is 0 when the input fits exactly and nothing is left for output', () => {
    assert.equal(affordableMaxTokens(GPT_4O_MINI, 1000, 1, 150_000, 16_384), 0);
  });

  test("is capped at the model's max_output_tokens", () => {
    assert.equal(affordableMaxTokens(GPT_4O_MINI, 1000, 1, 1_000_000_000, 16_384), 16_384);
  });

  test("is the model's max_output_tokens when output is free", () => {
    assert.equal(affordableMaxTokens(rates(150_000_000n, 0n), 1000, 1, 1_000_000, 4096), 4096);
  });

  test('agrees with sizeChatHold at every boundary (largest fitting, next one does not)', () => {
    const odd = rates(333_333_333n, 777_777_777n, 1n);
    for (const available of [1, 7, 999, 1_000, 123_457, 5_000_001, 99_999_999]) {
      for (const input of [0, 1, 13, 400]) {
        for (const n of [1, 2, 5]) {
          const affordable = affordableMaxTokens(odd, input, n, available, 1_000_000);
          const inputFits = sizeChatHold(odd, input, 0, n) <= available;
          const label = `available=${available} input=${input} n=${n} affordable=${affordable}`;
          if (!inputFits) {
            assert.equal(affordable, 0, label);
            continue;
          }
          assert.ok(sizeChatHold(odd, input, affordable, n) <= available, label);
          assert.ok(sizeChatHold(odd, input, affordable + 1, n) > available, label);
        }
      }
    }
  });
});
