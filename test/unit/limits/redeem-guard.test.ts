// The redemption guess limit (limits/redeem-guard.ts) over the in-process limiter: failures count per
// credential and per address, successes are taken back, attempts in flight count (so a burst cannot pass
// the limit), a refusal counts nothing in either scope, and the window frees them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InProcessRateLimiter } from '../../../src/limits/in-process-limiter.js';
import { RedeemGuard, type RedeemAdmission } from '../../../src/limits/redeem-guard.js';

function guard(maxFailures: number) {
  let now = 0;
  const limiter = new InProcessRateLimiter({ windowMs: 600_000, sweepIntervalMs: 0, now: () => now });
  return { guard: new RedeemGuard(limiter, maxFailures), tick: (ms: number) => (now += ms) };
}

const admitted = (a: RedeemAdmission) => {
  assert.ok(a.admitted);
  return a.attempt;
};

test('three failures of one credential refuse the fourth attempt, from any address, until the window moves on', async () => {
  const { guard: g, tick } = guard(3);
  for (const ip of ['1.1.1.1', '2.2.2.2', '3.3.3.3']) admitted(await g.admit('key:a', ip)).failed();
  const refused = await g.admit('key:a', '4.4.4.4');
  assert.ok(!refused.admitted);
  assert.ok(refused.retryAfterMs > 0 && refused.retryAfterMs <= 600_000);
  admitted(await g.admit('key:b', '4.4.4.4')).failed();
  tick(600_001);
  admitted(await g.admit('key:a', '5.5.5.5')).succeeded();
});

test('three failures from one address refuse a fourth credential there; a refusal counts nothing in the credential', async () => {
  const { guard: g } = guard(3);
  for (const c of ['key:a', 'key:b', 'key:c']) admitted(await g.admit(c, '9.9.9.9')).failed();
  assert.equal((await g.admit('key:d', '9.9.9.9')).admitted, false);
  // key:d's refused attempt took nothing: it still has three from elsewhere.
  for (let i = 0; i < 3; i++) admitted(await g.admit('key:d', `8.8.8.${i}`)).failed();
  assert.equal((await g.admit('key:d', '7.7.7.7')).admitted, false);
});

test('successes count for nothing; attempts in flight count until they end', async () => {
  const { guard: g } = guard(2);
  for (let i = 0; i < 10; i++) admitted(await g.admit('account:x', '1.2.3.4')).succeeded();
  const first = admitted(await g.admit('account:x', '1.2.3.4'));
  const second = admitted(await g.admit('account:x', '1.2.3.4'));
  assert.equal((await g.admit('account:x', '1.2.3.4')).admitted, false, 'two in flight fill the limit');
  first.succeeded();
  second.failed();
  admitted(await g.admit('account:x', '1.2.3.4')).failed();
  assert.equal((await g.admit('account:x', '1.2.3.4')).admitted, false);
});
