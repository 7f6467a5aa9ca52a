// Price modifiers read from the answer (product.md §14): `speed: "fast"` prices at the model's `fast`
// set, `inference_geo` and `service_tier` multiply the token prices, server tools are priced per use —
// all exact to the nano-dollar with one rounding per request — and what the config does not name
// changes nothing.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MULTIPLIER_ONE, priceUsage, type PriceRates, type TokenUsage } from '../../../src/billing/pricing.js';

const M = 1_000_000_000n; // $1 per 1M tokens, in nano-dollars per 1M tokens

/** Opus-like: $5 / $25 standard, $30 / $150 fast; US-only inference +10%; priority ×1.5, flex ×0.5; web search $0.01. */
const OPUS: PriceRates = {
  input: 5n * M,
  output: 25n * M,
  cachedInput: 500_000_000n,
  cacheWrite: 6_250_000_000n,
  cacheWrite1h: 10n * M,
  tiers: [{ aboveInputTokens: 200_000, input: 10n * M, output: 37_500_000_000n, cachedInput: M }],
  request: 1_000n,
  fast: { input: 30n * M, output: 150n * M, cachedInput: 3n * M, cacheWrite: 37_500_000_000n, cacheWrite1h: 60n * M },
  geoMultipliers: new Map([['us', 1_100_000_000n]]),
  tierMultipliers: new Map([
    ['priority', 1_500_000_000n],
    ['flex', 500_000_000n],
  ]),
  perCall: new Map([['web_search', 10_000_000n]]),
};

const usage = (input: number, output: number, modifiers?: TokenUsage['modifiers'], extra: Partial<TokenUsage> = {}): TokenUsage => ({
  input,
  cachedInput: 0,
  output,
  reasoning: 0,
  ...extra,
  ...(modifiers ? { modifiers } : {}),
});

describe('speed: "fast"', () => {
  test('prices every token class at the fast set', () => {
    // 600 plain × 30 + 300 reads × 3 + 50 5m-writes × 37.5 + 50 1h-writes × 60 + 40 out × 150 = 29_775 USD/1M, + $0.000001 fee
    const tokens = usage(1000, 40, { speed: 'fast' }, { cachedInput: 300, cacheWrite: 100, cacheWrite1h: 50 });
    assert.equal(priceUsage(OPUS, tokens), 29_775_000 + 1_000);
  });

  test('ignores long-context tiers: the fast set applies whatever the input’s size', () => {
    assert.equal(priceUsage(OPUS, usage(300_000, 0, { speed: 'fast' })), 300_000 * 30_000 + 1_000);
    assert.equal(priceUsage(OPUS, usage(300_000, 0)), 300_000 * 10_000 + 1_000, 'the long-context tier without fast');
  });

  test('"standard", another word, or a model without fast prices: the usual prices', () => {
    const standard = priceUsage(OPUS, usage(1000, 40));
    assert.equal(priceUsage(OPUS, usage(1000, 40, { speed: 'standard' })), standard);
    assert.equal(priceUsage(OPUS, usage(1000, 40, { speed: 'Fast' })), standard);
    const { fast: _fast, ...noFast } = OPUS;
    assert.equal(priceUsage(noFast, usage(1000, 40, { speed: 'fast' })), standard);
  });
});

describe('geo and tier multipliers', () => {
  test('multiply the token prices exactly, not the fees', () => {
    // (1000 × 5 + 40 × 25) × 1.1 = 6600 USD/1M → 6_600_000 nano; the $0.000001 request fee is not multiplied
    assert.equal(priceUsage(OPUS, usage(1000, 40, { geo: 'us' })), 6_600_000 + 1_000);
    // × 1.1 × 1.5 = 9900
    assert.equal(priceUsage(OPUS, usage(1000, 40, { geo: 'us', tier: 'priority' })), 9_900_000 + 1_000);
    assert.equal(priceUsage(OPUS, usage(1000, 40, { tier: 'flex' })), 3_000_000 + 1_000);
  });

  test('stack with the fast set', () => {
    // (1000 × 30 + 40 × 150) × 1.1 = 39_600 USD/1M
    assert.equal(priceUsage(OPUS, usage(1000, 40, { speed: 'fast', geo: 'us' })), 39_600_000 + 1_000);
  });

  test('round once per request, after the multipliers: a third of a nano-dollar is one nano-dollar', () => {
    const rates: PriceRates = { input: 1n, output: 0n, cachedInput: 1n, tierMultipliers: new Map([['t', 333_333_334n]]) };
    // 3 tokens × 1 nano per 1M × 0.333333334 = 1.000000002 / 1M nano → 1 nano (not 3 × a rounded third)
    assert.equal(priceUsage(rates, usage(3, 0, { tier: 't' })), 1);
    assert.equal(priceUsage(rates, usage(3_000_000, 0, { tier: 't' })), 2, '1.000000002 nano rounds up to 2');
    const exact: PriceRates = { input: 3n * M, output: 0n, cachedInput: 3n * M, geoMultipliers: new Map([['eu', 1_000_000_001n]]) };
    // 1,000,000 tokens × $3 / 1M × 1.000000001 = 3_000_000_003 nano exactly
    assert.equal(priceUsage(exact, usage(1_000_000, 0, { geo: 'eu' })), 3_000_000_003);
  });

  test('an unknown geo or tier, or a model without multipliers, is ×1', () => {
    const plain = priceUsage(OPUS, usage(1000, 40));
    assert.equal(priceUsage(OPUS, usage(1000, 40, { geo: 'global', tier: 'standard' })), plain);
    const { geoMultipliers: _g, tierMultipliers: _t, ...none } = OPUS;
    assert.equal(priceUsage(none, usage(1000, 40, { geo: 'us', tier: 'priority' })), plain);
    assert.equal(MULTIPLIER_ONE, 1_000_000_000n);
  });
});

describe('server tools per use', () => {
  test('each use of a priced tool adds its fee, never multiplied; an unpriced tool adds nothing', () => {
    const plain = priceUsage(OPUS, usage(1000, 40));
    assert.equal(priceUsage(OPUS, usage(1000, 40, { serverToolUses: { web_search: 3 } })), plain + 30_000_000);
    assert.equal(priceUsage(OPUS, usage(1000, 40, { serverToolUses: { web_search: 3, web_fetch: 9 } })), plain + 30_000_000);
    assert.equal(priceUsage(OPUS, usage(1000, 40, { geo: 'us', serverToolUses: { web_search: 1 } })), 6_600_000 + 1_000 + 10_000_000);
  });

  test('a count that is not a whole number of uses is none', () => {
    const plain = priceUsage(OPUS, usage(1000, 40));
    for (const count of [-2, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.equal(priceUsage(OPUS, usage(1000, 40, { serverToolUses: { web_search: count } })), plain, String(count));
    }
  });

  test('with no tokens at all the uses are still charged', () => {
    assert.equal(priceUsage(OPUS, usage(0, 0, { serverToolUses: { web_search: 2 } })), 20_000_000 + 1_000);
  });
});

test('modifiers that change nothing price exactly as no modifiers', () => {
  const tokens = usage(123_457, 999, undefined, { cachedInput: 777, cacheWrite: 55, cacheWrite1h: 5 });
  assert.equal(priceUsage(OPUS, { ...tokens, modifiers: { servedModel: 'claude-opus-x', tier: 'standard' } }), priceUsage(OPUS, tokens));
});
