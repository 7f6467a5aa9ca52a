// The order in which a request tries its upstreams: fallback order, weighted order, cool-downs skipped,
// providers without credentials left out.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelConfig } from '../../../src/config/types.js';
import { GatewayError } from '../../../src/errors.js';
import { adapterFor } from '../../../src/providers/registry.js';
import { orderCandidates } from '../../../src/routing/order-candidates.js';
import { ProviderHealth } from '../../../src/routing/provider-health.js';
import type { Candidate, Route } from '../../../src/routing/resolve-route.js';
import { testProvider } from '../../support/provider-fixture.js';

function candidate(id: string, weight = 1, apiKey = 'sk-x'): Candidate {
  const provider = testProvider({ id, apiKey, cooldown: { failures: 1, seconds: 10 } });
  return {
    provider,
    adapter: adapterFor('openai'),
    weight,
    target: { provider, upstreamModel: `${id}-model`, clientModel: 'm', maxOutputTokens: 100 },
  };
}

function route(routing: ModelConfig['routing'], candidates: Candidate[]): Route {
  const model = { id: 'm', routing } as ModelConfig;
  return { model, candidates };
}

const ids = (list: readonly Candidate[]) => list.map((c) => c.provider.id);

describe('orderCandidates', () => {
  test('keeps the configured order for routing: fallback', () => {
    const r = route('fallback', [candidate('a'), candidate('b'), candidate('c')]);
    assert.deepEqual(ids(orderCandidates(r, new ProviderHealth())), ['a', 'b', 'c']);
  });

  test('skips upstreams that are cooling down', () => {
    const r = route('fallback', [candidate('a'), candidate('b')]);
    const health = new ProviderHealth();
    health.recordFailure(r.candidates[0]!.provider);
    assert.deepEqual(ids(orderCandidates(r, health)), ['b']);
  });

  test('answers upstream_error with Retry-After when every upstream is cooling down', () => {
    const r = route('fallback', [candidate('a')]);
    const health = new ProviderHealth();
    health.recordFailure(r.candidates[0]!.provider);
    assert.throws(
      () => orderCandidates(r, health),
      (error: unknown) => error instanceof GatewayError && error.code === 'upstream_error' && error.headers?.['retry-after'] === '10',
    );
  });

  test('leaves out providers whose kind needs an api key and has none, and names them when none is left', () => {
    assert.deepEqual(ids(orderCandidates(route('fallback', [candidate('nokey', 1, ''), candidate('b')]), new ProviderHealth())), ['b']);
    assert.throws(
      () => orderCandidates(route('fallback', [candidate('nokey', 1, '')]), new ProviderHealth()),
      (error: unknown) => error instanceof GatewayError && error.code === 'upstream_error' && /'nokey'/.test(error.message),
    );
  });

  test('draws a weighted order in proportion to the weights for routing: weighted', () => {
    const r = route('weighted', [candidate('heavy', 3), candidate('light', 1)]);
    // A fixed sequence of uniform draws makes the test deterministic.
    let seed = 12345;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    let heavyFirst = 0;
    const runs = 4000;
    for (let i = 0; i < runs; i++) {
      const order = orderCandidates(r, new ProviderHealth(), random);
      assert.equal(order.length, 2, 'every upstream stays in the order, as a fallback');
      if (order[0]!.provider.id === 'heavy') heavyFirst++;
    }
    const share = heavyFirst / runs;
    assert.ok(share > 0.72 && share < 0.78, `weight 3 of 4 leads about 75% of the time, got ${share}`);
  });
});
