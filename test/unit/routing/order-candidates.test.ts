// The order in which a request tries its upstreams: fallback order, weighted order, cool-downs skipped
// (or, when every upstream cools down, all tried soonest-recovering first). Providers without credentials
// are no candidates at all: test/unit/routing/access.test.ts.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelConfig } from '../../../src/config/types.js';
import { adapterFor } from '../../../src/providers/registry.js';
import { orderCandidates } from '../../../src/routing/order-candidates.js';
import type { Candidate, Route } from '../../../src/routing/resolve-route.js';
import { UpstreamHealth } from '../../../src/routing/upstream-health.js';
import { testProvider } from '../../support/provider-fixture.js';

function candidate(id: string, weight = 1, apiKey = 'sk-x', seconds = 10): Candidate {
  const provider = testProvider({ id, apiKey, cooldown: { failures: 1, seconds } });
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

const ids = (order: { candidates: readonly Candidate[] }) => order.candidates.map((c) => c.provider.id);
const fail = { status: 500, message: 'down' };

describe('orderCandidates', () => {
  test('keeps the configured order for routing: fallback', () => {
    const r = route('fallback', [candidate('a'), candidate('b'), candidate('c')]);
    assert.deepEqual(ids(orderCandidates(r, new UpstreamHealth())), ['a', 'b', 'c']);
  });

  test('skips upstreams that are cooling down', () => {
    const r = route('fallback', [candidate('a'), candidate('b')]);
    const health = new UpstreamHealth();
    health.recordFailure(r.candidates[0]!.target, fail);
    const order = orderCandidates(r, health);
    assert.deepEqual(ids(order), ['b']);
    assert.equal(order.panic, false);
  });

  test('still offers a single upstream that is cooling down (panic routing), never refusing for the cool-down alone', () => {
    const r = route('fallback', [candidate('a')]);
    const health = new UpstreamHealth();
    health.recordFailure(r.candidates[0]!.target, fail);
    const order = orderCandidates(r, health);
    assert.deepEqual(ids(order), ['a']);
    assert.equal(order.panic, true);
  });

  test('when every upstream is cooling down, tries them all, the one whose cool-down ends first leading', () => {
    let now = 0;
    const health = new UpstreamHealth(() => now);
    const r = route('fallback', [candidate('long', 1, 'sk-x', 60), candidate('short', 1, 'sk-x', 5), candidate('mid', 1, 'sk-x', 20)]);
    for (const c of r.candidates) health.recordFailure(c.target, fail);
    now += 1_000;
    const order = orderCandidates(r, health);
    assert.deepEqual(ids(order), ['short', 'mid', 'long']);
    assert.equal(order.panic, true);
  });

  test('cooling is per upstream model: another model of the same provider stays in line', () => {
    const health = new UpstreamHealth();
    const a = candidate('a');
    const sibling: Candidate = { ...a, target: { ...a.target, upstreamModel: 'a-other-model' } };
    health.recordFailure(a.target, fail);
    assert.deepEqual(ids(orderCandidates(route('fallback', [sibling]), health)), ['a']);
    assert.equal(orderCandidates(route('fallback', [sibling]), health).panic, false);
  });

  test('draws a weighted order in proportion to the weights for routing: weighted', () => {
    const r = route('weighted', [candidate('heavy', 3), candidate('light', 1)]);
    // A fixed sequence of uniform draws makes the test deterministic.
    let seed = 12345;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    let heavyFirst = 0;
    const runs = 4000;
    for (let i = 0; i < runs; i++) {
      const order = orderCandidates(r, new UpstreamHealth(), random);
      assert.equal(order.candidates.length, 2, 'every upstream stays in the order, as a fallback');
      if (order.candidates[0]!.provider.id === 'heavy') heavyFirst++;
    }
    const share = heavyFirst / runs;
    assert.ok(share > 0.72 && share < 0.78, `weight 3 of 4 leads about 75% of the time, got ${share}`);
  });
});
