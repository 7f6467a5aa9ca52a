// The rate limiter's semantics (product.md §8), one suite for both implementations: the in-process one
// runs it on a fake clock, the Redis one on a real server and real time (its window-sliding tests use a
// short window and real sleeps, so they stay few; every bound they check holds however slow the machine).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RateAdmission, RateLimiter, RateLimits, RateTicket } from '../../src/limits/rate-limiter.js';

export interface LimiterHarness {
  /** A ready limiter (closed after the test by the harness's `after`). */
  limiter(options?: { windowMs?: number; slotTtlMs?: number }): Promise<RateLimiter>;
  /** Lets `ms` pass: a fake clock moves, or the test sleeps. */
  advance(ms: number): Promise<void>;
  /** The window of the tests that let it slide: the real 60 s on a fake clock, a short one in real time. */
  readonly slideWindowMs: number;
  /** The slot TTL of the tests that let a slot expire. */
  readonly slotTtlMs: number;
}

const limits = (l: Partial<RateLimits>): RateLimits => ({ rpm: null, tpm: null, maxConcurrent: null, ...l });

function ticketOf(admission: RateAdmission): RateTicket {
  if (!admission.admitted) assert.fail(`expected an admission, got ${JSON.stringify(admission)}`);
  return admission.ticket;
}

function refusal(admission: RateAdmission): Extract<RateAdmission, { admitted: false }> {
  assert.equal(admission.admitted, false, 'refused');
  return admission as Extract<RateAdmission, { admitted: false }>;
}

/** n admissions sent together, in order (one pipelined batch in Redis). */
function burst(limiter: RateLimiter, n: number, l: RateLimits, tokens = 1, key = 'key_a'): Promise<RateAdmission[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => limiter.admit(key, `req_${i}_${Math.random()}`, l, tokens)));
}

const admittedCount = (all: RateAdmission[]): number => all.filter((a) => a.admitted).length;

export function rateLimiterSuite(harness: () => LimiterHarness): void {
  test('rpm 10: a burst of 30 admits exactly 10 and refuses 20, each with a Retry-After of at least a second', async () => {
    const h = harness();
    const limiter = await h.limiter();
    const all = await burst(limiter, 30, limits({ rpm: 10 }));
    assert.deepEqual(all.map((a) => a.admitted), [...Array(10).fill(true), ...Array(20).fill(false)]);
    assert.deepEqual(all.slice(0, 10).map((a) => a.state.requests?.remaining), [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    for (const a of all.slice(10)) {
      const r = refusal(a);
      assert.equal(r.limit, 'rpm');
      assert.equal(r.neverFits, false);
      assert.ok(r.retryAfterMs >= 1000 && r.retryAfterMs <= 60_000, `retryAfterMs ${r.retryAfterMs}`);
      assert.deepEqual(r.state.requests && { limit: r.state.requests.limit, remaining: r.state.requests.remaining }, { limit: 10, remaining: 0 });
    }
  });

  test('rpm: once the window has passed, requests are admitted again, as many as the limit', async () => {
    const h = harness();
    const limiter = await h.limiter({ windowMs: h.slideWindowMs });
    const l = limits({ rpm: 3 });
    assert.equal(admittedCount(await burst(limiter, 6, l)), 3);
    await h.advance(h.slideWindowMs + 1);
    assert.equal(admittedCount(await burst(limiter, 6, l)), 3);
  });

  test('rpm: the Retry-After is when the oldest admission leaves the window, not the newest', async () => {
    const h = harness();
    const window = h.slideWindowMs;
    const limiter = await h.limiter({ windowMs: window });
    const l = limits({ rpm: 3 });
    ticketOf(await limiter.admit('key_a', 'r1', l, 1));
    await h.advance(window * 0.3);
    assert.equal(admittedCount(await burst(limiter, 2, l)), 2);
    const r = refusal(await limiter.admit('key_a', 'r4', l, 1));
    assert.ok(r.retryAfterMs <= window * 0.7, `retryAfterMs ${r.retryAfterMs} ≤ ${window * 0.7}`);
  });

  test('tpm: the tokens of the window plus the new estimate must fit; 1000 of 1000 fits, 1001 does not', async () => {
    const limiter = await harness().limiter();
    const l = limits({ tpm: 1000 });
    ticketOf(await limiter.admit('key_a', 'r1', l, 400));
    ticketOf(await limiter.admit('key_a', 'r2', l, 400));
    const r = refusal(await limiter.admit('key_a', 'r3', l, 201));
    assert.equal(r.limit, 'tpm');
    assert.equal(r.neverFits, false);
    assert.ok(r.retryAfterMs >= 1000 && r.retryAfterMs <= 60_000);
    assert.equal(r.state.tokens?.remaining, 200);
    const a = await limiter.admit('key_a', 'r4', l, 200);
    ticketOf(a);
    assert.equal(a.state.tokens?.remaining, 0);
  });

  test('tpm: finishing with fewer tokens than estimated gives the difference back', async () => {
    const limiter = await harness().limiter();
    const l = limits({ tpm: 1000 });
    const first = ticketOf(await limiter.admit('key_a', 'r1', l, 800));
    refusal(await limiter.admit('key_a', 'r2', l, 500));
    first.finish(100);
    const a = await limiter.admit('key_a', 'r3', l, 500);
    ticketOf(a);
    assert.equal(a.state.tokens?.remaining, 400);
  });

  test('tpm: finishing with more tokens than estimated counts the real usage', async () => {
    const limiter = await harness().limiter();
    const l = limits({ tpm: 1000 });
    ticketOf(await limiter.admit('key_a', 'r1', l, 100)).finish(900);
    assert.equal((await limiter.peek('key_a', l)).tokens?.remaining, 100);
    assert.equal(refusal(await limiter.admit('key_a', 'r2', l, 200)).limit, 'tpm');
  });

  test('tpm: a request whose estimate alone exceeds tpm is refused as never fitting, and counts nothing', async () => {
    const limiter = await harness().limiter();
    const l = limits({ rpm: 5, tpm: 1000, maxConcurrent: 1 });
    const r = refusal(await limiter.admit('key_a', 'r1', l, 1001));
    assert.deepEqual([r.limit, r.neverFits, r.retryAfterMs], ['tpm', true, 60_000]);
    const state = await limiter.peek('key_a', l);
    assert.equal(state.requests?.remaining, 5);
    assert.equal(state.tokens?.remaining, 1000);
    ticketOf(await limiter.admit('key_a', 'r2', l, 1000));
  });

  test('tpm: a correction after the admission has left the window changes nothing', async () => {
    const h = harness();
    const limiter = await h.limiter({ windowMs: h.slideWindowMs });
    const l = limits({ tpm: 1000 });
    const old = ticketOf(await limiter.admit('key_a', 'r1', l, 600));
    await h.advance(h.slideWindowMs + 1);
    ticketOf(await limiter.admit('key_a', 'r2', l, 900));
    old.finish(0);
    old.cancel();
    assert.equal((await limiter.peek('key_a', l)).tokens?.remaining, 100);
  });

  test('tpm: the Retry-After is when enough tokens have left the window, walking from the oldest', async () => {
    const h = harness();
    const window = h.slideWindowMs;
    const limiter = await h.limiter({ windowMs: window });
    const l = limits({ tpm: 1000 });
    ticketOf(await limiter.admit('key_a', 'r1', l, 400));
    await h.advance(window * 0.3);
    ticketOf(await limiter.admit('key_a', 'r2', l, 400));
    // 500 fits once the first 400 have left; 700 needs both to leave.
    const [afterFirst, afterBoth] = (await Promise.all([limiter.admit('key_a', 'r3', l, 500), limiter.admit('key_a', 'r4', l, 700)])).map(refusal);
    assert.ok(afterFirst!.retryAfterMs <= window * 0.7, `retryAfterMs ${afterFirst!.retryAfterMs} ≤ ${window * 0.7}`);
    assert.ok(afterBoth!.retryAfterMs > afterFirst!.retryAfterMs, `${afterBoth!.retryAfterMs} > ${afterFirst!.retryAfterMs}`);
  });

  test('max_concurrent: requests beyond the limit in flight are refused until one ends', async () => {
    const limiter = await harness().limiter();
    const l = limits({ maxConcurrent: 2 });
    const [a, b] = (await burst(limiter, 2, l)).map(ticketOf);
    const r = refusal(await limiter.admit('key_a', 'r3', l, 1));
    assert.deepEqual([r.limit, r.neverFits, r.retryAfterMs, r.state], ['max_concurrent', false, 1000, {}]);
    a!.finish(1);
    ticketOf(await limiter.admit('key_a', 'r4', l, 1));
    b!.cancel();
    ticketOf(await limiter.admit('key_a', 'r5', l, 1));
    refusal(await limiter.admit('key_a', 'r6', l, 1));
  });

  test('max_concurrent: the slot of a request never finished expires after the slot TTL', async () => {
    const h = harness();
    const limiter = await h.limiter({ slotTtlMs: h.slotTtlMs });
    const l = limits({ maxConcurrent: 1 });
    ticketOf(await limiter.admit('key_a', 'r1', l, 1));
    refusal(await limiter.admit('key_a', 'r2', l, 1));
    await h.advance(h.slotTtlMs + 1);
    ticketOf(await limiter.admit('key_a', 'r3', l, 1));
  });

  test('max_concurrent: renew keeps a long request\'s slot past the TTL', async () => {
    const h = harness();
    const limiter = await h.limiter({ slotTtlMs: h.slotTtlMs });
    const l = limits({ maxConcurrent: 1 });
    const long = ticketOf(await limiter.admit('key_a', 'r1', l, 1));
    await h.advance(h.slotTtlMs * 0.6);
    long.renew();
    await h.advance(h.slotTtlMs * 0.6);
    refusal(await limiter.admit('key_a', 'r2', l, 1));
    long.finish(1);
    ticketOf(await limiter.admit('key_a', 'r3', l, 1));
  });

  test('a refusal by one limit counts nothing in the others', async () => {
    const limiter = await harness().limiter();
    const l = limits({ rpm: 3, tpm: 1000, maxConcurrent: 1 });
    const first = ticketOf(await limiter.admit('key_a', 'r1', l, 100));
    assert.equal(refusal(await limiter.admit('key_a', 'r2', l, 100)).limit, 'max_concurrent');
    first.finish(100);
    assert.equal(refusal(await limiter.admit('key_a', 'r3', l, 2000)).limit, 'tpm');
    assert.equal(refusal(await limiter.admit('key_a', 'r4', l, 950)).limit, 'tpm');
    const state = await limiter.peek('key_a', l);
    assert.deepEqual([state.requests?.remaining, state.tokens?.remaining], [2, 900]);
    const a = await limiter.admit('key_a', 'r5', l, 100);
    ticketOf(a);
    assert.deepEqual([a.state.requests?.remaining, a.state.tokens?.remaining], [1, 800]);
  });

  test('when several limits refuse, the refusal names the one with the longest wait', async () => {
    const limiter = await harness().limiter();
    const l = limits({ rpm: 1, maxConcurrent: 1 });
    ticketOf(await limiter.admit('key_a', 'r1', l, 1));
    const r = refusal(await limiter.admit('key_a', 'r2', l, 1));
    assert.equal(r.limit, 'rpm', 'rpm waits for the window; max_concurrent only a second');
    assert.ok(r.retryAfterMs > 1000);
  });

  test('cancel: a cancelled admission counts for nothing in any limit', async () => {
    const limiter = await harness().limiter();
    const l = limits({ rpm: 2, tpm: 1000, maxConcurrent: 1 });
    ticketOf(await limiter.admit('key_a', 'r1', l, 600)).cancel();
    const b = ticketOf(await limiter.admit('key_a', 'r2', l, 900));
    b.finish(900);
    const c = await limiter.admit('key_a', 'r3', l, 100);
    ticketOf(c);
    assert.deepEqual([c.state.requests?.remaining, c.state.tokens?.remaining], [0, 0]);
    assert.equal(refusal(await limiter.admit('key_a', 'r4', l, 0)).limit, 'rpm');
  });

  test('finish and cancel are idempotent: the first ending wins and frees only its own slot', async () => {
    const limiter = await harness().limiter();
    const l = limits({ tpm: 1000, maxConcurrent: 1 });
    const a = ticketOf(await limiter.admit('key_a', 'r1', l, 600));
    a.finish(100);
    a.finish(50);
    a.cancel();
    a.renew();
    ticketOf(await limiter.admit('key_a', 'r2', l, 100));
    a.finish(0);
    a.cancel();
    assert.equal(refusal(await limiter.admit('key_a', 'r3', l, 100)).limit, 'max_concurrent', 'the second request still holds the slot');
    assert.equal((await limiter.peek('key_a', l)).tokens?.remaining, 800);
  });

  test('keys without limits are admitted at once with one shared ticket, counting nothing', async () => {
    const limiter = await harness().limiter();
    const none = limits({});
    const [a, b] = await burst(limiter, 2, none);
    assert.equal(ticketOf(a!), ticketOf(b!));
    assert.deepEqual(a!.state, {});
    assert.deepEqual(await limiter.peek('key_a', none), {});
  });

  test('each key has its own limits', async () => {
    const limiter = await harness().limiter();
    const l = limits({ rpm: 1 });
    ticketOf(await limiter.admit('key_a', 'r1', l, 1));
    ticketOf(await limiter.admit('key_b', 'r2', l, 1));
    refusal(await limiter.admit('key_a', 'r3', l, 1));
  });

  test('state: remaining counts this request, reset is the newest admission\'s expiry; an unknown key is full', async () => {
    const limiter = await harness().limiter();
    const l = limits({ rpm: 5, tpm: 100 });
    assert.deepEqual(await limiter.peek('key_a', l), { requests: { limit: 5, remaining: 5, resetMs: 0 }, tokens: { limit: 100, remaining: 100, resetMs: 0 } });
    const a = await limiter.admit('key_a', 'r1', l, 30);
    assert.deepEqual(a.state, { requests: { limit: 5, remaining: 4, resetMs: 60_000 }, tokens: { limit: 100, remaining: 70, resetMs: 60_000 } });
    const peeked = await limiter.peek('key_a', l);
    assert.ok(peeked.requests!.resetMs > 0 && peeked.requests!.resetMs <= 60_000);
    assert.deepEqual(Object.keys(await limiter.peek('key_a', limits({ rpm: 5 }))), ['requests'], 'only the dimensions the key limits');
  });

  test('a limit lowered while requests are in the window applies at once', async () => {
    const limiter = await harness().limiter();
    assert.equal(admittedCount(await burst(limiter, 5, limits({ rpm: 5 }))), 5);
    const r = refusal(await limiter.admit('key_a', 'r', limits({ rpm: 3 }), 1));
    assert.equal(r.limit, 'rpm');
    assert.equal(r.state.requests?.remaining, 0);
  });

  test('an admission counts in the limits in force when it was admitted: without tpm, its tokens never count', async () => {
    const limiter = await harness().limiter();
    const before = ticketOf(await limiter.admit('key_a', 'r1', limits({ rpm: 5 }), 800));
    before.finish(900);
    const after = await limiter.admit('key_a', 'r2', limits({ rpm: 5, tpm: 1000 }), 1000);
    ticketOf(after);
    assert.deepEqual([after.state.requests?.remaining, after.state.tokens?.remaining], [3, 0]);
  });

  test('a token count that is not a whole number is counted as one: fractions up, NaN and negatives as 0, Infinity never fits', async () => {
    const limiter = await harness().limiter();
    const l = limits({ tpm: 100 });
    assert.equal((await limiter.admit('key_a', 'r1', l, 10.2)).state.tokens?.remaining, 89);
    assert.equal((await limiter.admit('key_a', 'r2', l, Number.NaN)).state.tokens?.remaining, 89);
    assert.equal((await limiter.admit('key_a', 'r3', l, -5)).state.tokens?.remaining, 89);
    const r = refusal(await limiter.admit('key_a', 'r4', l, Number.POSITIVE_INFINITY));
    assert.deepEqual([r.limit, r.neverFits], ['tpm', true]);
  });

  test('the same request id admitted twice is two admissions, each ending on its own', async () => {
    const limiter = await harness().limiter();
    const l = limits({ rpm: 5, tpm: 1000, maxConcurrent: 5 });
    const first = ticketOf(await limiter.admit('key_a', 'req_same', l, 300));
    const second = await limiter.admit('key_a', 'req_same', l, 300);
    ticketOf(second);
    assert.deepEqual([second.state.requests?.remaining, second.state.tokens?.remaining], [3, 400]);
    first.cancel();
    const state = await limiter.peek('key_a', l);
    assert.deepEqual([state.requests?.remaining, state.tokens?.remaining], [4, 700]);
  });

  test('a limit of 0 refuses everything, as never fitting', async () => {
    const limiter = await harness().limiter();
    const rpm = refusal(await limiter.admit('key_a', 'r1', limits({ rpm: 0 }), 1));
    assert.deepEqual([rpm.limit, rpm.neverFits], ['rpm', true]);
    const mc = refusal(await limiter.admit('key_a', 'r2', limits({ maxConcurrent: 0 }), 1));
    assert.deepEqual([mc.limit, mc.neverFits], ['max_concurrent', true]);
  });
}
