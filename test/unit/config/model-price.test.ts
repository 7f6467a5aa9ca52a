// price: cache_write, cache_write_1h, request and tiers in tollgate.yaml (product.md §13), and the
// modifiers read from a response: fast, geo_multipliers, tier_multipliers, per_call (product.md §14).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, parseConfig } from '../../../src/config/load.js';

const base = (price: string, type = 'chat') => `providers:
  p: { kind: openai, api_key: sk-test }
models:
  m:
    type: ${type}
    upstreams: [{ provider: p, model: x }]
    price: ${price}
${type === 'chat' ? '    max_output_tokens: 1000\n' : ''}`;

function problemsOf(yaml: string): readonly string[] {
  try {
    parseConfig(yaml, '/t.yaml', {});
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.problems;
  }
  assert.fail('expected a ConfigError');
}

describe('price: the prices of §13', () => {
  test('reads cache writes, the request fee and tiers into exact rates', () => {
    const yaml = base(`
      input: 3
      output: 15
      cached_input: 0.30
      cache_write: 3.75
      cache_write_1h: 6
      request: 0.001
      tiers:
        - { above_input_tokens: 200000, input: 6, output: 22.5, cached_input: 0.60, cache_write: 7.5 }`);
    const model = parseConfig(yaml, '/t.yaml', {}).models.get('m')!;
    assert.deepEqual(model.rates, {
      input: 3_000_000_000n,
      output: 15_000_000_000n,
      cachedInput: 300_000_000n,
      cacheWrite: 3_750_000_000n,
      cacheWrite1h: 6_000_000_000n,
      request: 1_000_000n,
      // A tier is resolved like the base prices: its cache_write_1h defaults to its own cache_write.
      tiers: [{ aboveInputTokens: 200_000, input: 6_000_000_000n, output: 22_500_000_000n, cachedInput: 600_000_000n, cacheWrite: 7_500_000_000n, cacheWrite1h: 7_500_000_000n }],
    });
    assert.deepEqual(model.displayPrice, {
      input: 3,
      output: 15,
      cached_input: 0.3,
      cache_write: 3.75,
      cache_write_1h: 6,
      request: 0.001,
      tiers: [{ above_input_tokens: 200000, input: 6, output: 22.5, cached_input: 0.6, cache_write: 7.5 }],
    });
  });

  test('config check rejects tiers that are not strictly increasing, naming the tier', () => {
    const yaml = base(`
      input: 1
      output: 2
      tiers:
        - { above_input_tokens: 200000, input: 2, output: 4 }
        - { above_input_tokens: 200000, input: 3, output: 6 }`);
    const problems = problemsOf(yaml);
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /^models\.m\.price\.tiers\[1\]\.above_input_tokens: tiers must be in strictly increasing order/);
  });

  test('a chat tier needs an output price; embeddings take no output-side prices nor tiers', () => {
    assert.match(problemsOf(base(`{ input: 1, output: 2, tiers: [{ above_input_tokens: 10, input: 2 }] }`)).join('\n'), /tiers\[0\]\.output: required for chat models/);
    const problems = problemsOf(base(`{ input: 1, cache_write: 2, tiers: [{ above_input_tokens: 10, input: 2 }] }`, 'embedding'));
    assert.ok(problems.some((p) => p.startsWith('models.m.price.cache_write:')));
    assert.ok(problems.some((p) => p.startsWith('models.m.price.tiers:')));
    // The fee is allowed on embeddings.
    assert.equal(parseConfig(base('{ input: 1, request: 0.0001 }', 'embedding'), '/t.yaml', {}).models.get('m')!.rates.request, 100_000n);
  });

  test('a fee or a tier price with more than 9 decimals is refused', () => {
    assert.match(problemsOf(base('{ input: 1, output: 2, request: 0.0000000001 }')).join('\n'), /price\.request: must be a decimal/);
  });
});

describe('price: the modifiers of §14', () => {
  test('reads fast, geo and tier multipliers and per-call fees into exact rates, and shows them in the model list', () => {
    const yaml = base(`
      input: 5
      output: 25
      fast: { input: 30, output: 150, cached_input: 3 }
      geo_multipliers: { us: 1.1 }
      tier_multipliers: { priority: 1.75, flex: "0.5" }
      per_call: { web_search: 0.01, web_fetch: 0 }`);
    const model = parseConfig(yaml, '/t.yaml', {}).models.get('m')!;
    // fast is a price set of its own: cache writes default to its own input, as the base prices do.
    assert.deepEqual(model.rates.fast, { input: 30_000_000_000n, output: 150_000_000_000n, cachedInput: 3_000_000_000n, cacheWrite: 30_000_000_000n, cacheWrite1h: 30_000_000_000n });
    assert.deepEqual([...model.rates.geoMultipliers!], [['us', 1_100_000_000n]]);
    assert.deepEqual([...model.rates.tierMultipliers!], [
      ['priority', 1_750_000_000n],
      ['flex', 500_000_000n],
    ]);
    assert.deepEqual([...model.rates.perCall!], [
      ['web_search', 10_000_000n],
      ['web_fetch', 0n],
    ]);
    assert.deepEqual(model.displayPrice, {
      input: 5,
      output: 25,
      fast: { input: 30, output: 150, cached_input: 3 },
      geo_multipliers: { us: 1.1 },
      tier_multipliers: { priority: 1.75, flex: 0.5 },
      per_call: { web_search: 0.01, web_fetch: 0 },
    });
  });

  test('a model without modifiers has none in its rates', () => {
    const rates = parseConfig(base('{ input: 1, output: 2 }'), '/t.yaml', {}).models.get('m')!.rates;
    assert.deepEqual(Object.keys(rates).sort(), ['cacheWrite', 'cacheWrite1h', 'cachedInput', 'input', 'output']);
  });

  test('a multiplier must be above 0 and at most 1000 with at most 9 decimals; a fee exact to 9 decimals; each named by its path', () => {
    const problems = problemsOf(
      base(`{ input: 1, output: 2, geo_multipliers: { us: 0, eu: 1001 }, tier_multipliers: { flex: 0.0000000001 }, per_call: { web_search: 0.0000000001 } }`),
    );
    const text = problems.join('\n');
    assert.match(text, /models\.m\.price\.geo_multipliers\.us: must be a multiplier above 0 and at most 1000/);
    assert.match(text, /models\.m\.price\.geo_multipliers\.eu: must be a multiplier/);
    assert.match(text, /models\.m\.price\.tier_multipliers\.flex: must be a multiplier/);
    // Not a number at all: the schema's own message (the file is read no further).
    assert.match(problemsOf(base('{ input: 1, output: 2, tier_multipliers: { scale: "x" } }')).join('\n'), /models\.m\.price\.tier_multipliers\.scale: expected a decimal number/);
    assert.match(problemsOf(base('{ input: 1, output: 2, per_call: { web_search: 0.0000000001 } }')).join('\n'), /models\.m\.price\.per_call\.web_search: must be a decimal with at most 9 decimal places \(USD per use\)/);
  });

  test('fast needs its output price and takes no tiers; embeddings take no modifiers', () => {
    assert.match(problemsOf(base('{ input: 1, output: 2, fast: { input: 6 } }')).join('\n'), /price\.fast\.output/);
    assert.match(problemsOf(base('{ input: 1, output: 2, fast: { input: 6, output: 12, tiers: [] } }')).join('\n'), /price\.fast/);
    const problems = problemsOf(base('{ input: 1, fast: { input: 2, output: 2 }, geo_multipliers: { us: 1.1 }, tier_multipliers: { flex: 0.5 }, per_call: { web_search: 1 } }', 'embedding'));
    for (const key of ['fast', 'geo_multipliers', 'tier_multipliers', 'per_call']) {
      assert.ok(problems.some((p) => p.startsWith(`models.m.price.${key}: embedding models`)), key);
    }
  });
});
