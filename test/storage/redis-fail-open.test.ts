// Rate limits fail OPEN (product.md §8): a Redis of the test's own is killed, paused and restarted under
// the limiter. Requests keep being admitted (uncounted), one warning line when Redis goes (and one a
// minute at most while it is slow), a counter for the metric, nothing thrown or left unhandled — and once
// Redis is back the limits count again.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { NO_OP_TICKET } from '../../src/limits/admission.js';
import type { RateAdmission, RateLimits } from '../../src/limits/rate-limiter.js';
import { RedisRateLimiter, type RedisRateLimiterOptions } from '../../src/limits/redis-limiter.js';
import { closedPort } from '../support/e2e.js';
import { redisServerSkipReason, startRedisServer, type ThrowawayRedis } from '../support/redis.js';

const skip = redisServerSkipReason();
const rpm5: RateLimits = { rpm: 5, tpm: null, maxConcurrent: null };

interface LogLine {
  level: number;
  msg: string;
  code?: string;
  suppressed?: number;
  fail_open_count?: number;
}

/** A limiter whose log lines are kept; closed after the test. */
function limiterAt(url: string, options: Partial<RedisRateLimiterOptions> = {}): { limiter: RedisRateLimiter; lines: LogLine[]; warnings: () => LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  // A generous timeout unless a test is about it: a loaded machine's stalled event loop must not fail open.
  const limiter = new RedisRateLimiter({ url, logger, commandTimeoutMs: 5_000, ...options });
  opened.push(limiter);
  return { limiter, lines, warnings: () => lines.filter((l) => l.level === 40) };
}

const opened: RedisRateLimiter[] = [];
const servers: ThrowawayRedis[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => void unhandled.push(reason);

before(() => process.on('unhandledRejection', onUnhandled));
after(() => process.off('unhandledRejection', onUnhandled));
afterEach(async () => {
  await Promise.all(opened.splice(0).map((l) => l.close()));
  await Promise.all(servers.splice(0).map((s) => s.stop()));
  assert.deepEqual(unhandled.splice(0), [], 'no unhandled rejections');
});

async function server(): Promise<ThrowawayRedis> {
  const s = await startRedisServer();
  servers.push(s);
  return s;
}

function burst(limiter: RedisRateLimiter, n: number, l = rpm5): Promise<RateAdmission[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => limiter.admit('key_a', `req_${i}_${Math.random()}`, l, 1)));
}

const admittedCount = (all: RateAdmission[]): number => all.filter((a) => a.admitted).length;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('RedisRateLimiter fails open', { skip }, () => {
  test('Redis killed mid-run: every request is admitted uncounted, one warning for the burst, the counter moves; restarted, the limits apply again', async () => {
    const redis = await server();
    let callbacks = 0;
    const { limiter, lines, warnings } = limiterAt(redis.url, { onFailOpen: () => void (callbacks += 1) });
    assert.equal(await limiter.ready(5_000), true);
    assert.equal(admittedCount(await burst(limiter, 8)), 5, 'the limits apply while Redis answers');

    await redis.kill();
    const during = await burst(limiter, 40);
    assert.ok(during.every((a) => a.admitted && a.ticket === NO_OP_TICKET), 'admitted, counting nothing');
    await sleep(300); // reconnect attempts fail meanwhile, each an 'error' event
    const later = await burst(limiter, 40);
    assert.equal(admittedCount(later), 40);
    assert.equal(limiter.failOpenCount, 80);
    assert.equal(callbacks, 80);
    assert.equal(warnings().length, 1, `one warning line, got ${JSON.stringify(warnings())}`);
    assert.match(warnings()[0]!.msg, /rate limits fail open/);
    assert.deepEqual(await limiter.peek('key_a', rpm5), {}, 'peek answers an empty state');

    await redis.restart();
    assert.equal(await limiter.ready(10_000), true, 'reconnected by itself');
    assert.equal(admittedCount(await burst(limiter, 8)), 5, 'the limits apply again');
    assert.equal(limiter.failOpenCount, 80);
    assert.ok(lines.some((l) => l.level === 30 && /Redis answers again/.test(l.msg)), 'its return is logged');
  });

  test('Redis too slow: the request is admitted after the command timeout, and the late admission is undone when Redis wakes', async () => {
    const redis = await server();
    const { limiter } = limiterAt(redis.url, { commandTimeoutMs: 200 });
    assert.equal(await limiter.ready(5_000), true);
    const l: RateLimits = { rpm: 3, tpm: null, maxConcurrent: null };
    assert.equal(admittedCount(await burst(limiter, 2, l)), 2);

    redis.pause();
    const slow = await limiter.admit('key_a', 'req_slow', l, 1);
    assert.ok(slow.admitted && slow.ticket === NO_OP_TICKET, 'admitted uncounted, without waiting for Redis');
    assert.equal(limiter.failOpenCount, 1);
    redis.resume();

    // The timed-out script ran once Redis woke, and the cancel sent after it took it back: one place is left.
    assert.equal(admittedCount(await burst(limiter, 3, l)), 1);
    assert.equal(limiter.failOpenCount, 1);
  });

  test('a ticket ending while Redis is down is dropped quietly: no throw, no unhandled rejection', async () => {
    const redis = await server();
    const { limiter } = limiterAt(redis.url);
    assert.equal(await limiter.ready(5_000), true);
    const admitted = await limiter.admit('key_a', 'req_1', { rpm: 5, tpm: 100, maxConcurrent: 1 }, 10);
    assert.ok(admitted.admitted && admitted.ticket !== NO_OP_TICKET);
    await redis.kill();
    admitted.ticket.renew();
    admitted.ticket.finish(5);
    await sleep(50);
  });

  test('started while Redis is down: it fails open at once, then counts as soon as Redis comes up', async () => {
    const redis = await server();
    await redis.kill();
    const { limiter } = limiterAt(redis.url);
    assert.equal(await limiter.ready(200), false);
    assert.equal(admittedCount(await burst(limiter, 8)), 8);
    assert.equal(limiter.failOpenCount, 8);
    await redis.restart();
    assert.equal(await limiter.ready(10_000), true);
    assert.equal(admittedCount(await burst(limiter, 8)), 5);
  });

  test('Redis unreachable however long: one warning line (its cause, not one a minute)', async () => {
    let now = 0;
    const { limiter, warnings } = limiterAt(`redis://127.0.0.1:${await closedPort()}`, { now: () => now });
    await limiter.ready(300);
    await burst(limiter, 10);
    now += 10 * 60_000;
    await burst(limiter, 10);
    assert.equal(limiter.failOpenCount, 20);
    assert.equal(warnings().length, 1, JSON.stringify(warnings()));
    assert.equal(warnings()[0]!.code, 'ECONNREFUSED');
    assert.match(warnings()[0]!.msg, /Redis unreachable: rate limits fail open/);
  });

  test('Redis slow (connected, not answering in time): at most one warning line a minute, which says how many were held back', async () => {
    let now = 0;
    const redis = await server();
    const { limiter, warnings } = limiterAt(redis.url, { now: () => now, commandTimeoutMs: 100 });
    assert.equal(await limiter.ready(5_000), true);
    redis.pause();
    try {
      await burst(limiter, 10);
      assert.equal(warnings().length, 1);
      assert.match(warnings()[0]!.msg, /Redis slow or refusing commands: rate limits fail open/);
      now += 59_999;
      await burst(limiter, 10);
      assert.equal(warnings().length, 1);
      now += 1;
      await burst(limiter, 1);
      assert.equal(warnings().length, 2);
      assert.ok(warnings()[1]!.suppressed! >= 19, `suppressed ${warnings()[1]!.suppressed}`);
      assert.equal(warnings()[1]!.fail_open_count, 21);
    } finally {
      redis.resume();
    }
  });

  test('close() ends the connection and its reconnecting, with Redis up or down', async () => {
    const redis = await server();
    const up = limiterAt(redis.url).limiter;
    assert.equal(await up.ready(5_000), true);
    const down = limiterAt(`redis://127.0.0.1:${await closedPort()}`).limiter;
    await Promise.all([up.close(), down.close()]);
    // Nothing is left running: were a reconnect timer alive, this file would never end.
  });
});
