// Per-key rate limits (product.md §8): requests and tokens in any rolling 60 s, and requests in flight.
// The pipeline asks one question per request — admit or refuse — before the hold is placed, and tells the
// ticket how the request ended. Budgets are not here: they are money and live in the ledger's admission.
// Two implementations behind this interface: in-process (one gateway) and Redis (shared by every gateway).

export type LimitName = 'rpm' | 'tpm' | 'max_concurrent';

/** A key's effective limits (its own, else the config's `limits:` defaults); null = no limit. */
export interface RateLimits {
  readonly rpm: number | null;
  readonly tpm: number | null;
  readonly maxConcurrent: number | null;
}

/** One dimension of the OpenAI-style x-ratelimit-* headers. */
export interface RateWindowState {
  readonly limit: number;
  /** What is left in the current rolling window after this request (never negative). */
  readonly remaining: number;
  /** Milliseconds until the window is back to its full limit (0 when it already is). */
  readonly resetMs: number;
}

/** Present for the dimensions the key limits: requests when rpm is set, tokens when tpm is set. */
export interface RateLimitState {
  readonly requests?: RateWindowState;
  readonly tokens?: RateWindowState;
}

/** A request that was admitted: it counts until it ends. */
export interface RateTicket {
  /**
   * The request ended: its token count becomes `actualTokens` (what it really used; the admission counted
   * the estimate) while it is still in the window, and its concurrency slot is freed. Idempotent; never
   * throws, never makes the caller wait (the Redis limiter sends it without awaiting the reply).
   */
  finish(actualTokens: number): void;
  /** The request was refused after all (e.g. 402 by the ledger): it counts for nothing. Idempotent. */
  cancel(): void;
  /** A long request keeps its concurrency slot from expiring (called every hold renewal). */
  renew(): void;
}

export type RateAdmission =
  | { readonly admitted: true; readonly ticket: RateTicket; readonly state: RateLimitState }
  | {
      readonly admitted: false;
      readonly limit: LimitName;
      /** When a retry can succeed (≥ 1). */
      readonly retryAfterMs: number;
      readonly state: RateLimitState;
      /** True when the request alone exceeds the limit (its token estimate is above tpm): no wait helps. */
      readonly neverFits: boolean;
    };

export interface RateLimiter {
  /**
   * Admits `requestId` (it names the admission in Redis; the same id twice is two admissions) for `keyId` under `limits`, counting `tokens` (the hold's
   * estimate: input + max output) towards tpm — atomically: all three limits pass, or nothing is counted.
   * An admission counts in the limits in force when it was admitted: its tokens only when tpm was set, its
   * slot only when max_concurrent was. A limit of 0 refuses everything (`neverFits`). Never throws: a
   * limiter that cannot decide (Redis unreachable) admits (fail open).
   */
  admit(keyId: string, requestId: string, limits: RateLimits, tokens: number): Promise<RateAdmission>;
  /** The current state for the headers, counting nothing. Never throws (empty state when unknown). */
  peek(keyId: string, limits: RateLimits): Promise<RateLimitState>;
  close(): Promise<void>;
}

/** True when the key has any rate limit at all (keys without one skip the limiter entirely). */
export function hasRateLimits(limits: RateLimits): boolean {
  return limits.rpm !== null || limits.tpm !== null || limits.maxConcurrent !== null;
}
