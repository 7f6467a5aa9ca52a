// Rate limits counted in this process (no `redis:` in the config): each gateway limits its own traffic.
// rpm and tpm are an exact sliding log (docs/adr/0014-rate-limit-algorithm.md): every admission of the
// last window is kept, oldest first, with its token count and a running sum, so "any rolling 60 s" holds
// exactly — a fixed or GCRA window would let up to twice the limit through across a boundary. Each
// admission is its own ticket object, so the log costs one allocation per request and nothing else.
import {
  ADMITTED_UNCOUNTED_PROMISE,
  CONCURRENCY_RETRY_MS,
  DEFAULT_SLOT_TTL_MS,
  DEFAULT_WINDOW_MS,
  EMPTY_STATE_PROMISE,
  retryMs,
  tokenCount,
} from './admission.js';
import { hasRateLimits, type LimitName, type RateAdmission, type RateLimiter, type RateLimits, type RateLimitState, type RateTicket } from './rate-limiter.js';
import { Ring } from './ring.js';

export interface InProcessRateLimiterOptions {
  /** The clock in milliseconds; monotonic by default (a wall-clock step must not reopen a window). */
  readonly now?: () => number;
  /** The rolling window of rpm and tpm; 60 000 (tests may shorten it). */
  readonly windowMs?: number;
  /** How long a concurrency slot outlives a ticket never finished (a leak); renew() restarts it. */
  readonly slotTtlMs?: number;
  /** How often idle keys are dropped from memory; the window by default, 0 for no timer (tests call sweep()). */
  readonly sweepIntervalMs?: number;
}

interface KeyState {
  readonly keyId: string;
  /** The admissions of the window under rpm or tpm, oldest first; cancelled ones stay until they reach the head. */
  readonly log: Ring<InProcessTicket>;
  /** Admissions in the log that were not cancelled: what rpm counts. */
  live: number;
  /** Their token counts (estimates, corrected when finished): what tpm counts. */
  tokens: number;
  /** Requests holding a concurrency slot under max_concurrent. */
  readonly slots: Set<InProcessTicket>;
}

class InProcessTicket implements RateTicket {
  /** Admitted at (the limiter's clock); meaningful while inLog. */
  at = 0;
  tokens = 0;
  /** Admitted under tpm: its tokens count, and finish corrects them. */
  countsTokens = false;
  /** Still in the key's log (not yet aged out of the window). */
  inLog = false;
  /** Counted by rpm (false once cancelled). */
  live = false;
  slotUntil = 0;
  private done = false;

  constructor(
    private readonly limiter: InProcessRateLimiter,
    readonly state: KeyState,
  ) {}

  finish(actualTokens: number): void {
    if (this.done) return;
    this.done = true;
    this.limiter.release(this, tokenCount(actualTokens), false);
  }

  cancel(): void {
    if (this.done) return;
    this.done = true;
    this.limiter.release(this, 0, true);
  }

  renew(): void {
    if (!this.done) this.limiter.renewSlot(this);
  }
}

export class InProcessRateLimiter implements RateLimiter {
  private readonly states = new Map<string, KeyState>();
  private readonly now: () => number;
  private readonly windowMs: number;
  private readonly slotTtlMs: number;
  private readonly sweeper: NodeJS.Timeout | undefined;

  constructor(options: InProcessRateLimiterOptions = {}) {
    this.now = options.now ?? (() => performance.now());
    this.windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
    this.slotTtlMs = options.slotTtlMs ?? DEFAULT_SLOT_TTL_MS;
    const interval = options.sweepIntervalMs ?? this.windowMs;
    this.sweeper = interval > 0 ? setInterval(() => this.sweep(), interval).unref() : undefined;
  }

  /** Keys with state in memory (something in the window or in flight, or not yet swept). */
  get trackedKeys(): number {
    return this.states.size;
  }

  admit(keyId: string, _requestId: string, limits: RateLimits, tokens: number): Promise<RateAdmission> {
    if (!hasRateLimits(limits)) return ADMITTED_UNCOUNTED_PROMISE;
    return Promise.resolve(this.decide(keyId, limits, tokenCount(tokens)));
  }

  peek(keyId: string, limits: RateLimits): Promise<RateLimitState> {
    if (!hasRateLimits(limits)) return EMPTY_STATE_PROMISE;
    const state = this.states.get(keyId);
    const now = this.now();
    if (state) this.prune(state, now);
    return Promise.resolve(this.stateOf(state, limits, now));
  }

  close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.states.clear();
    return Promise.resolve();
  }

  /** Drops what has aged out, everywhere, and forgets idle keys: memory stays bounded by recent traffic. */
  sweep(): void {
    const now = this.now();
    for (const state of this.states.values()) {
      this.prune(state, now);
      this.expireSlots(state, now);
      if (state.log.length === 0 && state.slots.size === 0) this.states.delete(state.keyId);
    }
  }

  private decide(keyId: string, limits: RateLimits, tokens: number): RateAdmission {
    const now = this.now();
    const { rpm, tpm, maxConcurrent } = limits;
    let state = this.states.get(keyId);
    if (!state) {
      state = { keyId, log: new Ring(), live: 0, tokens: 0, slots: new Set() };
      this.states.set(keyId, state);
    }
    const logged = rpm !== null || tpm !== null;
    if (logged) this.prune(state, now);

    // Every limit is checked before anything is counted: a refusal by one counts nothing in the others.
    // The refusal names the limit that keeps the client waiting longest, so its Retry-After is honest.
    let refusedBy: LimitName | undefined;
    let waitMs = 0;
    let neverFits = false;
    if (rpm !== null && state.live >= rpm) {
      refusedBy = 'rpm';
      if (rpm <= 0) [waitMs, neverFits] = [this.windowMs, true];
      else waitMs = this.requestsFreeAt(state, rpm) - now;
    }
    if (tpm !== null && state.tokens + tokens > tpm && !neverFits) {
      if (tokens > tpm) [refusedBy, waitMs, neverFits] = ['tpm', this.windowMs, true];
      else {
        const tokensWait = this.tokensFreeAt(state, tpm - tokens) - now;
        if (refusedBy === undefined || tokensWait > waitMs) [refusedBy, waitMs] = ['tpm', tokensWait];
      }
    }
    if (maxConcurrent !== null && state.slots.size >= maxConcurrent && !neverFits) {
      this.expireSlots(state, now);
      if (state.slots.size >= maxConcurrent) {
        if (maxConcurrent <= 0) [refusedBy, waitMs, neverFits] = ['max_concurrent', this.windowMs, true];
        else if (refusedBy === undefined || CONCURRENCY_RETRY_MS > waitMs) [refusedBy, waitMs] = ['max_concurrent', CONCURRENCY_RETRY_MS];
      }
    }
    if (refusedBy !== undefined) {
      return { admitted: false, limit: refusedBy, retryAfterMs: retryMs(waitMs), neverFits, state: this.stateOf(state, limits, now) };
    }

    const ticket = new InProcessTicket(this, state);
    if (logged) {
      ticket.at = now;
      ticket.countsTokens = tpm !== null;
      ticket.tokens = ticket.countsTokens ? tokens : 0;
      ticket.inLog = true;
      ticket.live = true;
      state.log.push(ticket);
      state.live += 1;
      state.tokens += ticket.tokens;
    }
    if (maxConcurrent !== null) {
      ticket.slotUntil = now + this.slotTtlMs;
      state.slots.add(ticket);
    }
    return { admitted: true, ticket, state: this.stateOf(state, limits, now) };
  }

  /** The ticket ended: its tokens become the real count (or nothing, when cancelled), its slot frees. */
  release(ticket: InProcessTicket, actualTokens: number, cancelled: boolean): void {
    const state = ticket.state;
    if (ticket.inLog) {
      const now = this.now();
      // An admission that has aged out of the window counts for nothing any more: leave the sum alone.
      this.prune(state, now);
      if (ticket.inLog) {
        if (cancelled) {
          state.live -= 1;
          state.tokens -= ticket.tokens;
          ticket.tokens = 0;
          ticket.live = false;
          this.prune(state, now);
        } else if (ticket.countsTokens) {
          state.tokens += actualTokens - ticket.tokens;
          ticket.tokens = actualTokens;
        }
      }
    }
    state.slots.delete(ticket);
    if (state.log.length === 0 && state.slots.size === 0 && this.states.get(state.keyId) === state) this.states.delete(state.keyId);
  }

  renewSlot(ticket: InProcessTicket): void {
    const slots = ticket.state.slots;
    if (!slots.has(ticket)) return;
    const now = this.now();
    // A slot that has already expired stays expired, as in Redis: its place may have been given away.
    if (ticket.slotUntil <= now) slots.delete(ticket);
    else ticket.slotUntil = now + this.slotTtlMs;
  }

  /** Removes admissions older than the window, and cancelled ones that have reached the head. */
  private prune(state: KeyState, now: number): void {
    const cutoff = now - this.windowMs;
    const log = state.log;
    for (let oldest = log.first(); oldest !== undefined && (oldest.at <= cutoff || !oldest.live); oldest = log.first()) {
      log.shift();
      oldest.inLog = false;
      if (oldest.live) {
        state.live -= 1;
        state.tokens -= oldest.tokens;
      }
    }
  }

  private expireSlots(state: KeyState, now: number): void {
    for (const ticket of state.slots) if (ticket.slotUntil <= now) state.slots.delete(ticket);
  }

  /** When the admission that must leave for rpm to allow one more does (the oldest, unless rpm was lowered). */
  private requestsFreeAt(state: KeyState, rpm: number): number {
    let mustLeave = state.live - rpm + 1;
    for (let i = 0; i < state.log.length; i++) {
      const entry = state.log.at(i);
      if (entry.live && --mustLeave === 0) return entry.at + this.windowMs;
    }
    return 0;
  }

  /** When enough tokens have left the window for the sum to be at most `room`. */
  private tokensFreeAt(state: KeyState, room: number): number {
    let sum = state.tokens;
    for (let i = 0; i < state.log.length; i++) {
      const entry = state.log.at(i);
      sum -= entry.tokens;
      if (sum <= room) return entry.at + this.windowMs;
    }
    return 0;
  }

  private stateOf(state: KeyState | undefined, limits: RateLimits, now: number): RateLimitState {
    const resetMs = state ? this.resetMs(state, now) : 0;
    const live = state?.live ?? 0;
    const tokens = state?.tokens ?? 0;
    const out: { requests?: RateLimitState['requests']; tokens?: RateLimitState['tokens'] } = {};
    if (limits.rpm !== null) out.requests = { limit: limits.rpm, remaining: Math.max(0, limits.rpm - live), resetMs };
    if (limits.tpm !== null) out.tokens = { limit: limits.tpm, remaining: Math.max(0, limits.tpm - tokens), resetMs };
    return out;
  }

  /** Until the newest admission in the window leaves it: then the window is empty and back to full. */
  private resetMs(state: KeyState, now: number): number {
    for (let i = state.log.length - 1; i >= 0; i--) {
      const entry = state.log.at(i);
      if (entry.live) return Math.max(0, Math.ceil(entry.at + this.windowMs - now));
    }
    return 0;
  }
}
