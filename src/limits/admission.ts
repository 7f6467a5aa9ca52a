// What both rate limiters share: the defaults, the admission a key without limits gets, and the
// arithmetic of a refusal. The Redis scripts (redis-scripts.ts) repeat the same rules in Lua.
import type { LimitsConfig } from '../config/types.js';
import type { KeyRecord } from '../storage/types.js';
import type { RateAdmission, RateLimits, RateLimitState, RateTicket } from './rate-limiter.js';

/** The rolling window of rpm and tpm (product.md §8). Shorter only in tests. */
export const DEFAULT_WINDOW_MS = 60_000;
/** How long a concurrency slot outlives a request that is never finished (a crashed gateway). */
export const DEFAULT_SLOT_TTL_MS = 600_000;
/**
 * The Retry-After of a max_concurrent refusal: a slot frees when any request in flight ends, which no
 * limiter can foresee, so the client is told to try again soon rather than in a slot's TTL.
 */
export const CONCURRENCY_RETRY_MS = 1_000;

/** The ticket of an admission that counted nothing: keys without limits, and fail-open admissions. */
export const NO_OP_TICKET: RateTicket = Object.freeze({
  finish(): void {},
  cancel(): void {},
  renew(): void {},
});

const EMPTY_STATE: RateLimitState = Object.freeze({});

export const ADMITTED_UNCOUNTED: RateAdmission = Object.freeze({ admitted: true, ticket: NO_OP_TICKET, state: EMPTY_STATE });
/** Resolved once: a key without limits costs one comparison and no allocation. */
export const ADMITTED_UNCOUNTED_PROMISE: Promise<RateAdmission> = Promise.resolve(ADMITTED_UNCOUNTED);
export const EMPTY_STATE_PROMISE: Promise<RateLimitState> = Promise.resolve(EMPTY_STATE);

/** A token count as the limiter counts it: a whole, non-negative, safe integer (NaN counts as 0). */
export function tokenCount(tokens: number): number {
  return tokens > 0 ? Math.min(Math.ceil(tokens), Number.MAX_SAFE_INTEGER) : 0;
}

/** Retry-After in whole milliseconds, at least 1 (the interface promises ≥ 1). */
export function retryMs(ms: number): number {
  return ms >= 1 ? Math.ceil(ms) : 1;
}

/** The rate limits in force for a key: its own, else the config's `limits:` defaults. */
export function rateLimitsOf(key: KeyRecord, defaults: LimitsConfig): RateLimits {
  return {
    rpm: key.limits.rpm ?? defaults.rpm,
    tpm: key.limits.tpm ?? defaults.tpm,
    maxConcurrent: key.limits.maxConcurrent ?? defaults.maxConcurrent,
  };
}
