// The redemption guess limit shared through Redis (docs/adr/0051-redemption-codes.md): two gateways (two
// guards, each on its own Redis connection, one prefix) count one credential's and one address's failures
// together, and a burst of attempts at once across both never passes the limit.
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { pino } from 'pino';
import { RedeemGuard } from '../../src/limits/redeem-guard.js';
import { RedisRateLimiter } from '../../src/limits/redis-limiter.js';
import { deleteRedisKeys, freshRedisPrefix, redisSkipReason, TEST_REDIS_URL } from '../support/redis.js';

const skip = await redisSkipReason();
const opened: RedisRateLimiter[] = [];
const prefixes: string[] = [];

afterEach(async () => {
  const limiters = opened.splice(0);
  await Promise.all(limiters.map((l) => l.close()));
  await Promise.all(prefixes.splice(0).map((p) => deleteRedisKeys(p)));
  for (const l of limiters) assert.equal(l.failOpenCount, 0, 'no admission failed open');
});

async function twoGateways(maxFailures: number): Promise<[RedeemGuard, RedeemGuard]> {
  const prefix = freshRedisPrefix();
  prefixes.push(prefix);
  const guards = [];
  for (let i = 0; i < 2; i++) {
    const limiter = new RedisRateLimiter({ url: TEST_REDIS_URL, logger: pino({ level: 'silent' }), prefix, windowMs: 600_000, commandTimeoutMs: 5_000 });
    opened.push(limiter);
    assert.equal(await limiter.ready(5_000), true, 'connected to Redis');
    guards.push(new RedeemGuard(limiter, maxFailures));
  }
  return guards as [RedeemGuard, RedeemGuard];
}

describe('redemption guess limit in Redis', { skip }, () => {
  test("two gateways count one credential's failures and one address's together", async () => {
    const [a, b] = await twoGateways(3);
    for (const [guard, ip] of [[a, '1.1.1.1'], [b, '2.2.2.2'], [a, '3.3.3.3']] as const) {
      const admission = await guard.admit('key:k', ip);
      assert.ok(admission.admitted);
      admission.attempt.failed();
    }
    const refused = await b.admit('key:k', '4.4.4.4');
    assert.ok(!refused.admitted && refused.retryAfterMs > 0);
    for (const [guard, credential] of [[a, 'key:x'], [b, 'key:y'], [a, 'key:z']] as const) {
      const admission = await guard.admit(credential, '9.9.9.9');
      assert.ok(admission.admitted);
      admission.attempt.failed();
    }
    assert.equal((await b.admit('key:w', '9.9.9.9')).admitted, false);
  });

  test('40 attempts at once over both gateways: exactly the limit is admitted', async () => {
    const [a, b] = await twoGateways(5);
    const all = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).admit('account:burst', `10.0.0.${i}`)));
    assert.equal(all.filter((x) => x.admitted).length, 5);
  });
});
