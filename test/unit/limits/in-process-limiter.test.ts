// The in-process rate limiter: the shared semantics on a fake clock, then what only a fake clock can
// pin down exactly (window edges, Retry-After to the millisecond) and its memory: idle keys are dropped.
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { InProcessRateLimiter } from '../../../src/limits/in-process-limiter.js';
import type { RateAdmission, RateLimits, RateTicket } from '../../../src/limits/rate-limiter.js';
import { rateLimiterSuite } from '../../support/rate-limiter-suite.js';

const opened: InProcessRateLimiter[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((l) => l.close()));
});

function fakeClock(): { now: () => number; advance: (ms: number) => void } {
  let now = 1_000_000;
  return { now: () => now, advance: (ms) => void (now += ms) };
}

function limiterOn(clock: { now: () => number }, options: { windowMs?: number; slotTtlMs?: number } = {}): InProcessRateLimiter {
  const limiter = new InProcessRateLimiter({ now: clock.now, sweepIntervalMs: 0, ...options });
  opened.push(limiter);
  return limiter;
}

const limits = (l: Partial<RateLimits>): RateLimits => ({ rpm: null, tpm: null, maxConcurrent: null, ...l });

function ticketOf(admission: RateAdmission): RateTicket {
  if (!admission.admitted) assert.fail(`expected an admission, got ${JSON.stringify(admission)}`);
  return admission.ticket;
}

function retryOf(admission: RateAdmission): number {
  assert.equal(admission.admitted, false, 'refused');
  return (admission as Extract<RateAdmission, { admitted: false }>).retryAfterMs;
}

describe('InProcessRateLimiter: the shared semantics', () => {
  rateLimiterSuite(() => {
    const clock = fakeClock();
    return {
      limiter: (options) => Promise.resolve(limiterOn(clock, options)),
      advance: (ms) => Promise.resolve(clock.advance(ms)),
      slideWindowMs: 60_000,
      slotTtlMs: 600_000,
    };
  });
});

describe('InProcessRateLimiter: exact windows', () => {
  test('an admission counts for exactly 60 s: refused at 59 999 ms, admitted at 60 000 ms', async () => {
    const clock = fakeClock();
    const limiter = limiterOn(clock);
    const l = limits({ rpm: 1 });
    ticketOf(await limiter.admit('k', 'r1', l, 1));
    clock.advance(59_999);
    assert.equal(retryOf(await limiter.admit('k', 'r2', l, 1)), 1);
    clock.advance(1);
    ticketOf(await limiter.admit('k', 'r3', l, 1));
  });

  test('no rolling 60 s ever holds more than rpm admissions, across what a fixed window would call a boundary', async () => {
    const clock = fakeClock();
    const limiter = limiterOn(clock);
    const l = limits({ rpm: 10 });
    const admittedAt: number[] = [];
    // A request every 500 ms for five minutes: a fixed-window or GCRA limiter lets 2 × rpm through
    // around a window edge; the sliding log never more than rpm in any 60 s.
    for (let t = 0; t < 300_000; t += 500) {
      if ((await limiter.admit('k', `r${t}`, l, 1)).admitted) admittedAt.push(t);
      clock.advance(500);
    }
    for (const start of admittedAt) {
      const inWindow = admittedAt.filter((t) => t >= start && t < start + 60_000).length;
      assert.ok(inWindow <= 10, `${inWindow} admissions in the 60 s from ${start}`);
    }
    assert.equal(admittedAt.length, 50, 'and the limit is used in full: 10 a minute for 5 minutes');
  });

  test('Retry-After to the millisecond: rpm waits for the oldest, tpm for enough tokens, a lowered rpm for the right one', async () => {
    const clock = fakeClock();
    const limiter = limiterOn(clock);
    const rpm3 = limits({ rpm: 3 });
    for (let i = 0; i < 3; i++) {
      ticketOf(await limiter.admit('k', `r${i}`, rpm3, 1)); // t = 0, 10 s, 20 s
      clock.advance(10_000);
    }
    // t = 30 s
    assert.equal(retryOf(await limiter.admit('k', 'x', rpm3, 1)), 30_000, 'the first leaves at 60 s');
    assert.equal(retryOf(await limiter.admit('k', 'x', limits({ rpm: 2 }), 1)), 40_000, 'with rpm 2, the second must leave too');

    const tpm = limits({ tpm: 1000 });
    ticketOf(await limiter.admit('t', 'a', tpm, 400)); // t = 30 s
    clock.advance(15_000);
    ticketOf(await limiter.admit('t', 'b', tpm, 400)); // t = 45 s
    assert.equal(retryOf(await limiter.admit('t', 'c', tpm, 500)), 45_000, 'after a leaves (at 90 s)');
    assert.equal(retryOf(await limiter.admit('t', 'd', tpm, 700)), 60_000, 'after b leaves too (at 105 s)');
  });

  test('a cancelled admission in the middle of the window is skipped by rpm\'s Retry-After', async () => {
    const clock = fakeClock();
    const limiter = limiterOn(clock);
    const rpm3 = limits({ rpm: 3 });
    ticketOf(await limiter.admit('k', 'a', rpm3, 1)); // t = 0
    clock.advance(10_000);
    const b = ticketOf(await limiter.admit('k', 'b', rpm3, 1)); // t = 10 s
    clock.advance(10_000);
    ticketOf(await limiter.admit('k', 'c', rpm3, 1)); // t = 20 s
    b.cancel();
    clock.advance(10_000);
    ticketOf(await limiter.admit('k', 'd', rpm3, 1)); // t = 30 s: a, c, d count
    assert.equal(retryOf(await limiter.admit('k', 'e', limits({ rpm: 2 }), 1)), 50_000, 'a and c must leave (c at 80 s); b no longer counts');
  });
});

describe('InProcessRateLimiter: memory', () => {
  test('a key with only max_concurrent is forgotten as soon as its last request ends', async () => {
    const limiter = limiterOn(fakeClock());
    const l = limits({ maxConcurrent: 2 });
    const [a, b] = [ticketOf(await limiter.admit('k', 'a', l, 1)), ticketOf(await limiter.admit('k', 'b', l, 1))];
    a.finish(1);
    assert.equal(limiter.trackedKeys, 1);
    b.cancel();
    assert.equal(limiter.trackedKeys, 0);
  });

  test('a key whose only admission is cancelled is forgotten at once', async () => {
    const limiter = limiterOn(fakeClock());
    ticketOf(await limiter.admit('k', 'a', limits({ rpm: 5, tpm: 100 }), 10)).cancel();
    assert.equal(limiter.trackedKeys, 0);
  });

  test('10 000 one-off keys are all forgotten by the sweep once their window has passed', async () => {
    const clock = fakeClock();
    const limiter = limiterOn(clock);
    const l = limits({ rpm: 100, tpm: 10_000, maxConcurrent: 10 });
    for (let i = 0; i < 10_000; i++) ticketOf(await limiter.admit(`key_${i}`, `r${i}`, l, 50)).finish(40);
    assert.equal(limiter.trackedKeys, 10_000, 'their admissions are still in the window');
    clock.advance(59_999);
    limiter.sweep();
    assert.equal(limiter.trackedKeys, 10_000);
    clock.advance(1);
    limiter.sweep();
    assert.equal(limiter.trackedKeys, 0);
  });

  test('a request never finished holds its key until its slot\'s TTL, then the sweep lets both go', async () => {
    const clock = fakeClock();
    const limiter = limiterOn(clock, { slotTtlMs: 120_000 });
    ticketOf(await limiter.admit('k', 'leaked', limits({ maxConcurrent: 1, rpm: 10 }), 1));
    clock.advance(119_999);
    limiter.sweep();
    assert.equal(limiter.trackedKeys, 1);
    clock.advance(1);
    limiter.sweep();
    assert.equal(limiter.trackedKeys, 0);
  });

  test('the sweep runs by itself on a timer', async () => {
    const limiter = new InProcessRateLimiter({ sweepIntervalMs: 20, windowMs: 10 });
    opened.push(limiter);
    ticketOf(await limiter.admit('k', 'a', limits({ rpm: 5 }), 1));
    assert.equal(limiter.trackedKeys, 1);
    for (let i = 0; i < 100 && limiter.trackedKeys > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(limiter.trackedKeys, 0);
  });
});
