// The Redis rate limiter against a real Redis (TOLLGATE_TEST_REDIS_URL): the shared semantics, then what
// only Redis has — several gateways on one key, and keys that stay namespaced and expire by themselves.
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { RateAdmission, RateLimits, RateTicket } from '../../src/limits/rate-limiter.js';
import { RedisRateLimiter, type RedisRateLimiterOptions } from '../../src/limits/redis-limiter.js';
import { deleteRedisKeys, freshRedisPrefix, redisSkipReason, TEST_REDIS_URL, testRedisClient } from '../support/redis.js';
import { rateLimiterSuite } from '../support/rate-limiter-suite.js';

const skip = await redisSkipReason();
const silent = pino({ level: 'silent' });
const opened: RedisRateLimiter[] = [];
const prefixes: string[] = [];

afterEach(async () => {
  const limiters = opened.splice(0);
  await Promise.all(limiters.map((l) => l.close()));
  await Promise.all(prefixes.splice(0).map((p) => deleteRedisKeys(p)));
  // A limiter that failed open admitted without counting: a test that passed that way proved nothing.
  for (const l of limiters) assert.equal(l.failOpenCount, 0, 'no admission failed open');
});

async function openLimiter(prefix: string, options: Partial<RedisRateLimiterOptions> = {}): Promise<RedisRateLimiter> {
  // A generous command timeout: on a loaded machine an event loop stalled past the default 200 ms fails
  // commands open (as it should in production); these tests are about the counting, not the timeout.
  const limiter = new RedisRateLimiter({ url: TEST_REDIS_URL, logger: silent, prefix, commandTimeoutMs: 5_000, ...options });
  opened.push(limiter);
  assert.equal(await limiter.ready(5_000), true, 'connected to Redis');
  return limiter;
}

function newPrefix(): string {
  const prefix = freshRedisPrefix();
  prefixes.push(prefix);
  return prefix;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const limits = (l: Partial<RateLimits>): RateLimits => ({ rpm: null, tpm: null, maxConcurrent: null, ...l });
const admittedCount = (all: RateAdmission[]): number => all.filter((a) => a.admitted).length;

function ticketOf(admission: RateAdmission): RateTicket {
  if (!admission.admitted) assert.fail(`expected an admission, got ${JSON.stringify(admission)}`);
  return admission.ticket;
}

function retryOf(admission: RateAdmission): number {
  if (admission.admitted) assert.fail('expected a refusal');
  return admission.retryAfterMs;
}

describe('RedisRateLimiter: the shared semantics', { skip }, () => {
  rateLimiterSuite(() => {
    const prefix = newPrefix();
    return {
      limiter: (options) => openLimiter(prefix, options),
      advance: sleep,
      slideWindowMs: 1_000,
      slotTtlMs: 2_000,
    };
  });
});

describe('RedisRateLimiter: several gateways on one key', { skip }, () => {
  /** Three limiters on their own connections, as three gateway processes; admissions dealt round-robin. */
  async function threeGateways(l: RateLimits, n: number, tokens = 1): Promise<{ gateways: RedisRateLimiter[]; all: RateAdmission[] }> {
    const prefix = newPrefix();
    const gateways = await Promise.all([0, 1, 2].map(() => openLimiter(prefix)));
    const all = await Promise.all(Array.from({ length: n }, (_, i) => gateways[i % 3]!.admit('key_shared', `req_${i}`, l, tokens)));
    return { gateways, all };
  }

  test('rpm 10: 90 concurrent requests through three gateways admit exactly 10 in all', async () => {
    const { all } = await threeGateways(limits({ rpm: 10 }), 90);
    assert.equal(admittedCount(all), 10);
  });

  test('tpm 1000: 60 concurrent requests of 100 tokens through three gateways admit exactly 10', async () => {
    const { all } = await threeGateways(limits({ tpm: 1000 }), 60, 100);
    assert.equal(admittedCount(all), 10);
  });

  test('max_concurrent 4: exactly 4 of 30 run at once across three gateways; one ending lets one more in, anywhere', async () => {
    const { gateways, all } = await threeGateways(limits({ maxConcurrent: 4 }), 30);
    const running = all.filter((a) => a.admitted).map(ticketOf);
    assert.equal(running.length, 4);
    running[0]!.finish(1);
    const again = await Promise.all(gateways.map((g, i) => g.admit('key_shared', `later_${i}`, limits({ maxConcurrent: 4 }), 1)));
    assert.equal(admittedCount(again), 1);
  });
});

describe('RedisRateLimiter: keys in Redis', { skip }, () => {
  test('a key\'s state lives in four keys under the prefix, hash-tagged by key id, each with an expiry', async () => {
    const prefix = newPrefix();
    const limiter = await openLimiter(prefix, { slotTtlMs: 30_000 });
    ticketOf(await limiter.admit('key_a', 'req_1', limits({ rpm: 5, tpm: 100, maxConcurrent: 2 }), 10));
    const redis = testRedisClient();
    try {
      const keys = (await redis.keys(`${prefix}*`)).sort();
      assert.deepEqual(keys, ['flight', 'log', 'sum', 'tokens'].map((k) => `${prefix}{key_a}:${k}`));
      for (const key of keys) {
        const ttl = await redis.pttl(key);
        const max = key.endsWith(':flight') ? 30_000 : 60_000;
        assert.ok(ttl > 0 && ttl <= max, `${key} expires within ${max} ms (pttl ${ttl})`);
      }
      const members = await redis.zrange(`${prefix}{key_a}:log`, 0, -1);
      assert.equal(members.length, 1);
      assert.match(members[0]!, /^req_1#[0-9a-z]+$/, 'the member is the request id and a sequence number');
      assert.equal(await redis.get(`${prefix}{key_a}:sum`), '10');
    } finally {
      redis.disconnect();
    }
  });

  test('an idle key vanishes from Redis once its window and its slots have passed', async () => {
    const prefix = newPrefix();
    const limiter = await openLimiter(prefix, { windowMs: 300, slotTtlMs: 300 });
    ticketOf(await limiter.admit('key_a', 'req_1', limits({ rpm: 5, tpm: 100, maxConcurrent: 2 }), 10)).finish(5);
    ticketOf(await limiter.admit('key_a', 'req_2', limits({ maxConcurrent: 2 }), 10)); // never finished
    await sleep(350);
    const redis = testRedisClient();
    try {
      assert.deepEqual(await redis.keys(`${prefix}*`), []);
    } finally {
      redis.disconnect();
    }
  });

  test('hundreds of admissions leaving the window at once bring the sum back to zero', async () => {
    const prefix = newPrefix();
    const limiter = await openLimiter(prefix, { windowMs: 1_000 });
    const l = limits({ tpm: 1_000 });
    const first = await Promise.all(Array.from({ length: 450 }, (_, i) => limiter.admit('key_a', `req_${i}`, l, 2)));
    assert.equal(admittedCount(first), 450);
    await sleep(1_001);
    const after = await limiter.admit('key_a', 'req_last', l, 1_000);
    ticketOf(after);
    assert.equal(after.state.tokens?.remaining, 0);
  });

  test('the tpm Retry-After walks hundreds of admissions in batches to the one that makes room', async () => {
    const prefix = newPrefix();
    const window = 1_000;
    const limiter = await openLimiter(prefix, { windowMs: window });
    const l = limits({ tpm: 1_000 });
    await Promise.all(Array.from({ length: 200 }, (_, i) => limiter.admit('key_a', `old_${i}`, l, 2))); // 400 tokens
    await sleep(300);
    await Promise.all(Array.from({ length: 200 }, (_, i) => limiter.admit('key_a', `new_${i}`, l, 1))); // 200 more
    // 700 fits once 300 tokens have left: the 150th old admission. 950 needs all the old ones and 150 new.
    const [oldOnes, newOnes] = await Promise.all([limiter.admit('key_a', 'x', l, 700), limiter.admit('key_a', 'y', l, 950)]);
    assert.ok(retryOf(oldOnes!) <= window - 300, `${retryOf(oldOnes!)} ≤ ${window - 300}`);
    assert.ok(retryOf(newOnes!) > retryOf(oldOnes!), `${retryOf(newOnes!)} > ${retryOf(oldOnes!)}`);
  });

  test('cancel removes the admission from the log; finish keeps it with its real tokens; both free the slot', async () => {
    const prefix = newPrefix();
    const limiter = await openLimiter(prefix);
    const l = limits({ rpm: 5, tpm: 1_000, maxConcurrent: 5 });
    const a = ticketOf(await limiter.admit('key_a', 'req_a', l, 300));
    const b = ticketOf(await limiter.admit('key_a', 'req_b', l, 300));
    a.cancel();
    b.finish(120);
    await limiter.peek('key_a', l); // same connection: runs after both endings
    const redis = testRedisClient();
    try {
      const members = await redis.zrange(`${prefix}{key_a}:log`, 0, -1);
      assert.deepEqual(members.map((m) => m.split('#')[0]), ['req_b']);
      assert.deepEqual(await redis.hgetall(`${prefix}{key_a}:tokens`), { [members[0]!]: '120' });
      assert.equal(await redis.get(`${prefix}{key_a}:sum`), '120');
      assert.equal(await redis.zcard(`${prefix}{key_a}:flight`), 0);
    } finally {
      redis.disconnect();
    }
  });
});
