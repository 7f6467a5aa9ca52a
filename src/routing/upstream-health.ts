// Cool-down per upstream — the pair (provider id, upstream model), never the provider account: one
// failing model or Azure deployment must not take the account's other models down with it. After
// `cooldown.failures` consecutive retryable failures an upstream is skipped for `cooldown.seconds`
// (an upstream 429 asking for longer is believed, up to 10 minutes); a success resets the count.
// The table also keeps what operators ask about: the last error and the last five minutes' counts.
import type { ProviderConfig } from '../config/types.js';

/** The longest an upstream's own Retry-After may cool it down. */
export const MAX_RETRY_AFTER_COOLDOWN_MS = 10 * 60_000;

const MINUTE_MS = 60_000;
/** Requests and errors are counted per minute over this many minutes. */
const WINDOW_MINUTES = 5;

/** Which upstream: the provider account and the model (or deployment) name it knows. */
export interface UpstreamRef {
  readonly provider: ProviderConfig;
  readonly upstreamModel: string;
}

/** A failed attempt, as the health table needs it. */
export interface UpstreamFailureInfo {
  /** The upstream's HTTP status, or the gateway's reading of it (502 connection failure, 504 timeout). */
  readonly status: number;
  readonly message: string;
  /** The upstream's Retry-After, when it sent one. */
  readonly retryAfterMs?: number | undefined;
}

export interface UpstreamState {
  readonly consecutiveFailures: number;
  /** Epoch ms until which the upstream is skipped; 0 when it never cooled down. */
  readonly coolingUntil: number;
  readonly lastError: { readonly status: number; readonly message: string; readonly at: number } | undefined;
  /** Attempts and failed attempts in the last five minutes. */
  readonly recentRequests: number;
  readonly recentErrors: number;
}

interface MinuteCount {
  minute: number;
  requests: number;
  errors: number;
}

interface Health {
  consecutiveFailures: number;
  coolingUntil: number;
  lastError: UpstreamState['lastError'];
  readonly minutes: MinuteCount[];
  /** This gateway started a cool-down that no success has ended yet (upstream.recovered is due). */
  cooled: boolean;
}

/**
 * Told when an upstream this gateway saw fail starts cooling down, and when it answers again after one
 * (the upstream.cooling / upstream.recovered webhooks). Only on those transitions, never per request.
 */
export interface HealthTransitions {
  cooling(providerId: string, upstreamModel: string, coolingUntil: number, lastError: { readonly status: number; readonly message: string }): void;
  recovered(providerId: string, upstreamModel: string): void;
}

/** Told of every cool-down this table starts or extends (to share it with other gateways). */
export type CooldownListener = (providerId: string, upstreamModel: string, coolingUntil: number) => void;

export class UpstreamHealth {
  /** provider id → upstream model → health (two levels: no key string is built per request). */
  private readonly byProvider = new Map<string, Map<string, Health>>();
  private listener: CooldownListener | undefined;
  private transitions: HealthTransitions | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  /** One listener (shared-cooldowns.ts) learns of each local cool-down. */
  onCooldown(listener: CooldownListener | undefined): void {
    this.listener = listener;
  }

  /** One observer (the webhook events) learns of cool-downs starting and upstreams recovering. */
  onTransition(transitions: HealthTransitions | undefined): void {
    this.transitions = transitions;
  }

  /**
   * A cool-down another gateway started: this one skips the upstream until then too. It never shortens
   * one, and it does not count as a local failure (the upstream's minute counts stay this gateway's own).
   * True when it moved this gateway's cool-down.
   */
  applyCooldown(providerId: string, upstreamModel: string, coolingUntil: number): boolean {
    const health = this.getById(providerId, upstreamModel);
    if (coolingUntil <= health.coolingUntil) return false;
    health.coolingUntil = coolingUntil;
    health.consecutiveFailures = 0;
    return true;
  }

  isCooling(upstream: UpstreamRef): boolean {
    const health = this.find(upstream);
    return health !== undefined && health.coolingUntil > this.now();
  }

  /** Milliseconds until the upstream is tried again (0 when it is not cooling down). */
  coolingRemainingMs(upstream: UpstreamRef): number {
    const health = this.find(upstream);
    return health ? Math.max(0, health.coolingUntil - this.now()) : 0;
  }

  recordSuccess(upstream: UpstreamRef): void {
    const health = this.get(upstream);
    health.consecutiveFailures = 0;
    this.count(health, false);
    if (health.cooled) {
      health.cooled = false;
      this.transitions?.recovered(upstream.provider.id, upstream.upstreamModel);
    }
  }

  /**
   * Counts a retryable failure. Returns true when it started a cool-down (the caller stops retrying
   * this upstream); a failure while the upstream is already cooling — a panic-routed call — pushes the
   * cool-down out again but returns false, so that call keeps its usual retries.
   */
  recordFailure(upstream: UpstreamRef, failure: UpstreamFailureInfo): boolean {
    const health = this.get(upstream);
    const now = this.now();
    this.count(health, true);
    health.lastError = { status: failure.status, message: failure.message, at: now };
    health.consecutiveFailures += 1;
    const configuredMs = upstream.provider.cooldown.seconds * 1000;
    const askedMs = failure.status === 429 && failure.retryAfterMs !== undefined ? Math.min(failure.retryAfterMs, MAX_RETRY_AFTER_COOLDOWN_MS) : 0;
    const wasCooling = health.coolingUntil > now;
    // The upstream said how long it needs: believed at once when that is longer than the configured cool-down.
    const trips = askedMs > configuredMs || wasCooling || health.consecutiveFailures >= upstream.provider.cooldown.failures;
    if (!trips) return false;
    health.consecutiveFailures = 0;
    health.coolingUntil = Math.max(health.coolingUntil, now + Math.max(configuredMs, askedMs));
    this.listener?.(upstream.provider.id, upstream.upstreamModel, health.coolingUntil);
    if (!wasCooling && !health.cooled) {
      health.cooled = true;
      this.transitions?.cooling(upstream.provider.id, upstream.upstreamModel, health.coolingUntil, health.lastError);
    }
    return !wasCooling;
  }

  /** What the table knows about one upstream (zeros for one never called). */
  state(upstream: UpstreamRef): UpstreamState {
    const health = this.find(upstream);
    if (!health) return { consecutiveFailures: 0, coolingUntil: 0, lastError: undefined, recentRequests: 0, recentErrors: 0 };
    const oldest = Math.floor(this.now() / MINUTE_MS) - WINDOW_MINUTES + 1;
    let recentRequests = 0;
    let recentErrors = 0;
    for (const m of health.minutes) {
      if (m.minute < oldest) continue;
      recentRequests += m.requests;
      recentErrors += m.errors;
    }
    return { consecutiveFailures: health.consecutiveFailures, coolingUntil: health.coolingUntil, lastError: health.lastError, recentRequests, recentErrors };
  }

  private find(upstream: UpstreamRef): Health | undefined {
    return this.byProvider.get(upstream.provider.id)?.get(upstream.upstreamModel);
  }

  private get(upstream: UpstreamRef): Health {
    return this.getById(upstream.provider.id, upstream.upstreamModel);
  }

  private getById(providerId: string, upstreamModel: string): Health {
    let models = this.byProvider.get(providerId);
    if (!models) this.byProvider.set(providerId, (models = new Map()));
    let health = models.get(upstreamModel);
    if (!health) {
      health = { consecutiveFailures: 0, coolingUntil: 0, lastError: undefined, minutes: [], cooled: false };
      for (let i = 0; i < WINDOW_MINUTES; i++) health.minutes.push({ minute: -1, requests: 0, errors: 0 });
      models.set(upstreamModel, health);
    }
    return health;
  }

  /** One slot per minute in a ring of five: a slot from an older minute is reused. */
  private count(health: Health, failed: boolean): void {
    const minute = Math.floor(this.now() / MINUTE_MS);
    const slot = health.minutes[minute % WINDOW_MINUTES]!;
    if (slot.minute !== minute) {
      slot.minute = minute;
      slot.requests = 0;
      slot.errors = 0;
    }
    slot.requests += 1;
    if (failed) slot.errors += 1;
  }
}
