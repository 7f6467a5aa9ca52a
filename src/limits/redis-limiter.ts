// Rate limits shared by every gateway through Redis (`redis:` in the config): the sliding log of
// in-process-limiter.ts, kept in Redis by the scripts of redis-scripts.ts — one round trip to admit, one
// to finish, cancel or renew. Rate limits protect the upstream, not money, so they fail OPEN: Redis
// unreachable or slow (over `commandTimeoutMs`) admits the request uncounted, never throws, never waits
// for a reconnect (no offline queue) and counts each such admission. Unreachable is one warn line when
// it starts and one info line when it ends (telemetry/reachability.ts); slow, one warning a minute at
// most. ioredis reconnects by itself; once Redis answers again the limits apply again.
import { Redis } from 'ioredis';
import type { Logger } from '../log.js';
import type { Reachability } from '../telemetry/reachability.js';
import { failedForLackOfConnection, redisReachability, watchRedisConnection } from '../telemetry/redis-reachability.js';
import {
  ADMITTED_UNCOUNTED,
  ADMITTED_UNCOUNTED_PROMISE,
  CONCURRENCY_RETRY_MS,
  DEFAULT_SLOT_TTL_MS,
  DEFAULT_WINDOW_MS,
  EMPTY_STATE_PROMISE,
  retryMs,
  tokenCount,
} from './admission.js';
import { hasRateLimits, type LimitName, type RateAdmission, type RateLimiter, type RateLimits, type RateLimitState, type RateTicket } from './rate-limiter.js';
import { ADMIT_SCRIPT, END_SCRIPT, PEEK_SCRIPT } from './redis-scripts.js';

export const DEFAULT_REDIS_PREFIX = 'tollgate:rl:';
/** A limiter that waits longer than this for Redis admits uncounted: latency matters more than the limit. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 200;
/** At most one "Redis slow" warning line per this long. */
export const FAIL_OPEN_WARNING_INTERVAL_MS = 60_000;

export interface RedisRateLimiterOptions {
  /** redis://[user:password@]host:port[/db] (rediss:// for TLS). */
  readonly url: string;
  readonly logger: Logger;
  /** Namespace of every key this limiter writes; each gateway sharing limits must use the same one. */
  readonly prefix?: string;
  /** The rolling window of rpm and tpm; 60 000 (tests shorten it, for real-time window tests). */
  readonly windowMs?: number;
  /** How long the concurrency slot of a crashed gateway's request lives on; renew() restarts it. */
  readonly slotTtlMs?: number;
  readonly commandTimeoutMs?: number;
  /** Called once per admission that was admitted uncounted because Redis did not answer (for a metric). */
  readonly onFailOpen?: () => void;
  /** The clock of the warning throttle only; limits themselves use the Redis server's clock. */
  readonly now?: () => number;
  /** Where this connection reports Redis going and coming back (the gateway shares one with the cool-downs); by default its own. */
  readonly reachability?: Reachability;
}

const RATE_LIMITS_DOWN_MESSAGE = 'Redis unreachable: rate limits fail open (requests are admitted uncounted) until it answers';
const RATE_LIMITS_UP_MESSAGE = 'Redis answers again: rate limits apply';

type Reply = number[];
type Op = 'finish' | 'cancel' | 'renew';

/** The scripts, as ioredis' defineCommand adds them to the client (EVALSHA, EVAL when not yet loaded). */
interface ScriptCommands {
  tollgateRateAdmit(...keysAndArgs: (string | number)[]): Promise<Reply>;
  tollgateRateEnd(...keysAndArgs: (string | number)[]): Promise<number>;
  tollgateRatePeek(...keysAndArgs: (string | number)[]): Promise<Reply>;
}

const REFUSED_BY: readonly (LimitName | undefined)[] = [undefined, 'rpm', 'tpm', 'max_concurrent'];

class RedisTicket implements RateTicket {
  private done = false;

  constructor(
    private readonly limiter: RedisRateLimiter,
    private readonly keys: readonly string[],
    /** The admission's member in the log and slot sets: its request id and a sequence number. */
    private readonly member: string,
    /** Admitted under tpm: finish corrects its tokens. */
    private readonly countsTokens: boolean,
    /** Admitted under max_concurrent: it holds a slot to free and renew. */
    private readonly holdsSlot: boolean,
  ) {}

  finish(actualTokens: number): void {
    if (this.done) return;
    this.done = true;
    // An rpm-only admission has nothing to correct or free: no round trip.
    if (this.countsTokens || this.holdsSlot) this.limiter.end(this.keys, this.member, 'finish', this.countsTokens ? tokenCount(actualTokens) : -1);
  }

  cancel(): void {
    if (this.done) return;
    this.done = true;
    this.limiter.end(this.keys, this.member, 'cancel', 0);
  }

  renew(): void {
    if (!this.done && this.holdsSlot) this.limiter.end(this.keys, this.member, 'renew', 0);
  }
}

export class RedisRateLimiter implements RateLimiter {
  private readonly client: Redis & ScriptCommands;
  private readonly logger: Logger;
  private readonly prefix: string;
  private readonly windowMs: number;
  private readonly slotTtlMs: number;
  private readonly onFailOpen: (() => void) | undefined;
  private readonly now: () => number;
  private failOpens = 0;
  private lastWarningAt = -Infinity;
  private suppressedWarnings = 0;
  private readonly reachability: Reachability;
  /** Created here (not shared): closed with the limiter. */
  private readonly ownsReachability: boolean;
  private closed = false;
  /** Makes each admission's member unique, even if a request id were admitted twice (the sum must not drift). */
  private sequence = 0;

  constructor(options: RedisRateLimiterOptions) {
    this.logger = options.logger;
    this.prefix = options.prefix ?? DEFAULT_REDIS_PREFIX;
    this.windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
    this.slotTtlMs = options.slotTtlMs ?? DEFAULT_SLOT_TTL_MS;
    this.onFailOpen = options.onFailOpen;
    this.now = options.now ?? Date.now;
    const client = new Redis(options.url, {
      connectionName: 'tollgate-rate-limits',
      // Fail fast rather than queue: a command while disconnected is rejected at once (→ fail open),
      // one in flight when the connection drops is rejected, never resent (it may have counted already).
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      connectTimeout: 2_000,
      retryStrategy: (attempt: number) => Math.min(attempt * 100, 2_000),
    });
    client.defineCommand('tollgateRateAdmit', { numberOfKeys: 4, lua: ADMIT_SCRIPT });
    client.defineCommand('tollgateRateEnd', { numberOfKeys: 4, lua: END_SCRIPT });
    client.defineCommand('tollgateRatePeek', { numberOfKeys: 4, lua: PEEK_SCRIPT });
    // Also the 'error' listener without which ioredis would print every connection error.
    this.ownsReachability = options.reachability === undefined;
    this.reachability = options.reachability ?? redisReachability(options.url, this.logger, RATE_LIMITS_DOWN_MESSAGE, RATE_LIMITS_UP_MESSAGE);
    watchRedisConnection(client, this.reachability, 'rate-limits');
    this.client = client as Redis & ScriptCommands;
  }

  /** Admissions admitted uncounted because Redis did not answer, since start. */
  get failOpenCount(): number {
    return this.failOpens;
  }

  /**
   * Resolves true once connected, false after `timeoutMs` (the limiter then fails open until Redis
   * answers). Never rejects. For start-up, so the first requests are counted when Redis is there.
   */
  ready(timeoutMs = 2_000): Promise<boolean> {
    if (this.client.status === 'ready') return Promise.resolve(true);
    return new Promise((resolve) => {
      const onReady = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.client.off('ready', onReady);
        resolve(false);
      }, timeoutMs);
      this.client.once('ready', onReady);
    });
  }

  admit(keyId: string, requestId: string, limits: RateLimits, tokens: number): Promise<RateAdmission> {
    if (!hasRateLimits(limits)) return ADMITTED_UNCOUNTED_PROMISE;
    return this.admitCounted(keyId, requestId, limits, tokenCount(tokens));
  }

  async peek(keyId: string, limits: RateLimits): Promise<RateLimitState> {
    if (!hasRateLimits(limits)) return EMPTY_STATE_PROMISE;
    try {
      const [count, sum, resetMs] = await this.client.tollgateRatePeek(...this.keysOf(keyId), this.windowMs);
      return stateOf(limits, count!, sum!, resetMs!);
    } catch (error) {
      this.warn(error);
      return {};
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.ownsReachability) this.reachability.close();
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }

  /** Sends a ticket's ending without waiting for it; a failure leaves the slot to its TTL. */
  end(keys: readonly string[], member: string, op: Op, actualTokens: number): void {
    this.client.tollgateRateEnd(...keys, member, op, actualTokens, this.windowMs, this.slotTtlMs).catch((error: unknown) => this.warn(error));
  }

  private async admitCounted(keyId: string, requestId: string, limits: RateLimits, tokens: number): Promise<RateAdmission> {
    const keys = this.keysOf(keyId);
    this.sequence = (this.sequence + 1) % 1_000_000_000;
    const member = `${requestId}#${this.sequence.toString(36)}`;
    let reply: Reply;
    try {
      reply = await this.client.tollgateRateAdmit(
        ...keys,
        member,
        limits.rpm ?? -1,
        limits.tpm ?? -1,
        limits.maxConcurrent ?? -1,
        tokens,
        this.windowMs,
        this.slotTtlMs,
        CONCURRENCY_RETRY_MS,
      );
    } catch (error) {
      // A timed-out script may still run later: undo it, on the same connection so it runs after.
      this.client.tollgateRateEnd(...keys, member, 'cancel', 0, this.windowMs, this.slotTtlMs).catch(() => {});
      return this.failOpen(error);
    }
    const [admitted, refusedBy, waitMs, neverFits, count, sum, resetMs] = reply;
    const state = stateOf(limits, count!, sum!, resetMs!);
    if (admitted === 1) return { admitted: true, ticket: new RedisTicket(this, keys, member, limits.tpm !== null, limits.maxConcurrent !== null), state };
    return { admitted: false, limit: REFUSED_BY[refusedBy!]!, retryAfterMs: retryMs(waitMs!), neverFits: neverFits === 1, state };
  }

  private failOpen(error: unknown): RateAdmission {
    this.failOpens += 1;
    this.onFailOpen?.();
    this.warn(error);
    return ADMITTED_UNCOUNTED;
  }

  /** A command failed: news only when Redis is there but slow or refusing; unreachable, the Reachability says so. */
  private warn(error: unknown): void {
    if (this.closed || failedForLackOfConnection(this.client, error)) return;
    const now = this.now();
    if (now - this.lastWarningAt < FAIL_OPEN_WARNING_INTERVAL_MS) {
      this.suppressedWarnings += 1;
      return;
    }
    this.logger.warn(
      { redis_error: error instanceof Error ? error.message : String(error), fail_open_count: this.failOpens, suppressed: this.suppressedWarnings },
      'Redis slow or refusing commands: rate limits fail open (requests are admitted uncounted) while it does not answer in time',
    );
    this.lastWarningAt = now;
    this.suppressedWarnings = 0;
  }

  /** One hash tag per API key: its four keys live in one cluster slot, as a script needs. */
  private keysOf(keyId: string): string[] {
    const base = `${this.prefix}{${keyId}}:`;
    return [`${base}log`, `${base}tokens`, `${base}sum`, `${base}flight`];
  }
}

function stateOf(limits: RateLimits, count: number, sum: number, resetMs: number): RateLimitState {
  const out: { requests?: RateLimitState['requests']; tokens?: RateLimitState['tokens'] } = {};
  if (limits.rpm !== null) out.requests = { limit: limits.rpm, remaining: Math.max(0, limits.rpm - count), resetMs };
  if (limits.tpm !== null) out.tokens = { limit: limits.tpm, remaining: Math.max(0, limits.tpm - sum), resetMs };
  return out;
}
