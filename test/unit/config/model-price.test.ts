// price: cache_write, cache_write_1h, request and tiers in tollgate.yaml (product.md §13).
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
