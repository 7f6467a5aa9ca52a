// The in-process limiter against a reference written the slow, obvious way (every admission kept, every
// sum recomputed from scratch), over seeded random histories of admits, finishes, cancels, renewals and
// time passing: every decision, Retry-After and header state must be identical.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InProcessRateLimiter } from '../../../src/limits/in-process-limiter.js';
import type { RateAdmission, RateLimits, RateTicket } from '../../../src/limits/rate-limiter.js';
import { seededRng } from '../../support/seeded-random.js';

const WINDOW = 60_000;
const TTL = 20_000;

interface Admission {
  at: number;
  tokens: number;
  cancelled: boolean;
  ended: boolean;
  slot: boolean;
  slotUntil: number;
  logged: boolean;
  /** Admitted under tpm: its tokens count and are corrected. */
  tpm: boolean;
}

/** The semantics of product.md §8 and rate-limiter.ts, by brute force. */
class Reference {
  readonly all: Admission[] = [];

  decide(now: number, l: RateLimits, tokens: number): { admitted: boolean; limit?: string; retryAfterMs?: number; state: object } {
    const inWindow = this.all.filter((a) => a.logged && !a.cancelled && a.at > now - WINDOW);
    const sum = inWindow.reduce((s, a) => s + a.tokens, 0);
    const inFlight = this.all.filter((a) => a.slot && !a.ended && a.slotUntil > now).length;
    let limit: string | undefined;
    let wait = 0;
    if (l.rpm !== null && inWindow.length >= l.rpm) [limit, wait] = ['rpm', inWindow[inWindow.length - l.rpm]!.at + WINDOW - now];
    if (l.tpm !== null && sum + tokens > l.tpm) {
      let left = sum;
      const leaving = inWindow.find((a) => (left -= a.tokens) + tokens <= l.tpm!)!;
      const tokensWait = leaving.at + WINDOW - now;
      if (limit === undefined || tokensWait > wait) [limit, wait] = ['tpm', tokensWait];
    }
    if (l.maxConcurrent !== null && inFlight >= l.maxConcurrent && (limit === undefined || 1000 > wait)) [limit, wait] = ['max_concurrent', 1000];
    const admitted = limit === undefined;
    const count = inWindow.length + (admitted && (l.rpm !== null || l.tpm !== null) ? 1 : 0);
    const total = sum + (admitted && (l.rpm !== null || l.tpm !== null) ? tokens : 0);
    const newest = admitted ? now : inWindow[inWindow.length - 1]?.at;
    const resetMs = newest === undefined ? 0 : newest + WINDOW - now;
    const state: Record<string, object> = {};
    if (l.rpm !== null) state.requests = { limit: l.rpm, remaining: Math.max(0, l.rpm - count), resetMs };
    if (l.tpm !== null) state.tokens = { limit: l.tpm, remaining: Math.max(0, l.tpm - total), resetMs };
    return admitted ? { admitted, state } : { admitted, limit: limit!, retryAfterMs: Math.max(1, wait), state };
  }
}

function observed(a: RateAdmission): { admitted: boolean; limit?: string; retryAfterMs?: number; state: object } {
  return a.admitted ? { admitted: true, state: a.state } : { admitted: false, limit: a.limit, retryAfterMs: a.retryAfterMs, state: a.state };
}

for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
  test(`random history ${seed}: every decision, Retry-After and state equals the brute-force reference`, async () => {
    const rng = seededRng(seed);
    let now = 0;
    const limiter = new InProcessRateLimiter({ now: () => now, slotTtlMs: TTL, sweepIntervalMs: 0 });
    const reference = new Reference();
    const open: { ticket: RateTicket; ref: Admission }[] = [];
    let admitted = 0;
    let refused = 0;
    for (let step = 0; step < 3_000; step++) {
      const op = rng.weighted({ admit: 6, finish: 2, cancel: 1, renew: 1, advance: 3, sweep: 0.2 });
      if (op === 'advance') now += 500 * rng.int(0, 16); // coarse steps: admissions often reach the window's edge exactly
      else if (op === 'sweep') limiter.sweep();
      else if (op === 'admit') {
        // Mostly the key's usual limits; now and then lowered, or one dimension unset.
        const l: RateLimits = { rpm: rng.pick([8, 8, 8, 3, null]), tpm: rng.pick([2_000, 2_000, 2_000, 700, null]), maxConcurrent: rng.pick([4, 4, 2, null]) };
        if (l.rpm === null && l.tpm === null && l.maxConcurrent === null) continue;
        const tokens = rng.int(0, 500);
        const expected = reference.decide(now, l, tokens);
        const got = await limiter.admit('key', `r${step}`, l, tokens);
        assert.deepEqual(observed(got), expected, `step ${step} at ${now} ms`);
        if (got.admitted) {
          admitted += 1;
          const ref: Admission = { at: now, tokens: l.tpm !== null ? tokens : 0, tpm: l.tpm !== null, cancelled: false, ended: false, slot: l.maxConcurrent !== null, slotUntil: now + TTL, logged: l.rpm !== null || l.tpm !== null };
          reference.all.push(ref);
          open.push({ ticket: got.ticket, ref });
        } else refused += 1;
      } else if (open.length > 0) {
        const { ticket, ref } = rng.pick(open);
        if (op === 'renew') {
          ticket.renew();
          if (!ref.ended && ref.slotUntil > now) ref.slotUntil = now + TTL;
          continue;
        }
        const actual = rng.int(0, 600);
        if (op === 'finish') ticket.finish(actual);
        else ticket.cancel();
        if (!ref.ended && ref.at > now - WINDOW) {
          if (op === 'finish') {
            if (ref.tpm) ref.tokens = actual;
          }
          else ref.cancelled = true;
        }
        ref.ended = true;
      }
    }
    assert.ok(admitted > 300 && refused > 300, `a history with both outcomes (${admitted} admitted, ${refused} refused)`);
    await limiter.close();
  });
}
