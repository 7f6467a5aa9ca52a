// Guessing redemption codes is limited (docs/adr/0051-redemption-codes.md): failed redemptions count per
// credential (a key, or an account token) and per client address, at most `maxFailures` in any rolling
// `windowMs`; past that a redeem is 429 before the database is asked. It is the rate limiter's sliding
// log (in-process, or Redis shared by every gateway when `redis:` is set) with rpm = maxFailures and
// its own window: every attempt is admitted first — so attempts in flight count, and 50 at once cannot
// slip past the limit — and a redemption that succeeds takes its admissions back (cancel); a failed one
// keeps them. Like the rate limits, a Redis that does not answer admits (fails open).
import { randomBytes } from 'node:crypto';
import type { RateLimiter, RateLimits, RateTicket } from './rate-limiter.js';

export interface RedeemAttempt {
  /** The attempt succeeded: it counts for nothing. */
  succeeded(): void;
  /** The attempt failed: it stays counted in both scopes for the window. */
  failed(): void;
}

export type RedeemAdmission = { readonly admitted: true; readonly attempt: RedeemAttempt } | { readonly admitted: false; readonly retryAfterMs: number };

export class RedeemGuard {
  private readonly limits: RateLimits;
  private sequence = 0;
  /** Names this guard's admissions apart from every other gateway's (one Redis log holds them all). */
  private readonly origin = randomBytes(6).toString('hex');

  constructor(
    private readonly limiter: RateLimiter,
    maxFailures: number,
  ) {
    this.limits = { rpm: maxFailures, tpm: null, maxConcurrent: null };
  }

  /** Admits an attempt by `credential` (e.g. `key:<id>`) from `address`, or says how long to wait. */
  async admit(credential: string, address: string): Promise<RedeemAdmission> {
    const id = `redeem-${this.origin}-${++this.sequence}`;
    const tickets: RateTicket[] = [];
    for (const scope of [`credential:${credential}`, `ip:${address}`]) {
      const admission = await this.limiter.admit(scope, id, this.limits, 0);
      if (!admission.admitted) {
        for (const ticket of tickets) ticket.cancel();
        return { admitted: false, retryAfterMs: admission.retryAfterMs };
      }
      tickets.push(admission.ticket);
    }
    return {
      admitted: true,
      attempt: {
        succeeded: () => tickets.forEach((t) => t.cancel()),
        failed: () => tickets.forEach((t) => t.finish(0)),
      },
    };
  }

  close(): Promise<void> {
    return this.limiter.close();
  }
}
