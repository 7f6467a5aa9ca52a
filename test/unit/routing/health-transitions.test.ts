// The upstream.cooling / upstream.recovered transitions the health table tells (docs/adr/0052-signed-
// webhooks.md): once when a cool-down this gateway saw starts, once when the upstream answers after it;
// never per request, and not for a cool-down learnt from another gateway.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UpstreamHealth } from '../../../src/routing/upstream-health.js';
import { testProvider } from '../../support/provider-fixture.js';

test('one cooling per cool-down started here, one recovered at the first success after it', () => {
  let now = 1_000_000;
  const health = new UpstreamHealth(() => now);
  const told: string[] = [];
  health.onTransition({
    cooling: (provider, model, until, error) => told.push(`cooling ${provider}/${model} until ${until - now} after ${error.status}`),
    recovered: (provider, model) => told.push(`recovered ${provider}/${model}`),
  });
  const upstream = { provider: testProvider({ id: 'p1', cooldown: { failures: 2, seconds: 30 } }), upstreamModel: 'm' };
  health.recordSuccess(upstream);
  health.recordFailure(upstream, { status: 500, message: 'boom' });
  assert.deepEqual(told, []);
  health.recordFailure(upstream, { status: 502, message: 'boom' });
  health.recordFailure(upstream, { status: 502, message: 'boom' }); // while cooling: extends, no second event
  health.applyCooldown('p2', 'm', now + 60_000); // another gateway's: none
  now += 31_000;
  health.recordSuccess(upstream);
  health.recordSuccess(upstream);
  assert.deepEqual(told, ['cooling p1/m until 30000 after 502', 'recovered p1/m']);
});
