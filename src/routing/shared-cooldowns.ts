// Cool-downs shared by every gateway through Redis (`redis:`): when one gateway cools an upstream down,
// the others skip it too, instead of each paying its own run of failures to learn the same thing. Each
// cool-down is published on a channel (the live gateways apply it at once) and kept in a hash (a gateway
// that starts or reconnects later reads the current ones). Routing never waits for Redis: the table in
// upstream-health.ts stays the one the request path reads, synchronously; Redis down means each gateway
// goes on with its own cool-downs (fail open) and catches up when Redis answers again. Redis going and
// coming back is logged by the Reachability the gateway shares with the rate limiter.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from '../log.js';
import { redactDatabaseUrl } from '../storage/database-url.js';
import type { Reachability } from '../telemetry/reachability.js';
import { failedForLackOfConnection, watchRedisConnection } from '../telemetry/redis-reachability.js';
import type { UpstreamHealth } from './upstream-health.js';

export const COOLDOWN_CHANNEL = 'tollgate:cooldowns';
export const COOLDOWN_HASH = 'tollgate:cooldowns';
const WARNING_INTERVAL_MS = 60_000;

interface CooldownMessage {
  /** The publishing gateway (it ignores its own messages). */
  readonly from: string;
  readonly provider: string;
  readonly model: string;
  /** How long it cools from the moment it was published: clocks of two machines need not agree. */
  readonly remainingMs: number;
}

function fieldOf(provider: string, model: string): string {
  return JSON.stringify([provider, model]);
}

export class SharedCooldowns {
  private readonly id = randomUUID();
  private readonly client: Redis;
  private readonly subscriber: Redis;
  private lastWarning = 0;

  constructor(
    private readonly url: string,
    private readonly health: UpstreamHealth,
    private readonly log: Logger,
    reachability: Reachability,
  ) {
    const options = {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      commandTimeout: 500,
      connectTimeout: 2_000,
      retryStrategy: (attempt: number) => Math.min(attempt * 100, 2_000),
    };
    this.client = new Redis(url, { ...options, connectionName: 'tollgate-cooldowns' });
    // A subscribed connection takes no other commands; it resubscribes by itself after a reconnect.
    this.subscriber = new Redis(url, { ...options, connectionName: 'tollgate-cooldowns-sub', enableOfflineQueue: true });
    watchRedisConnection(this.client, reachability, 'cooldowns');
    watchRedisConnection(this.subscriber, reachability, 'cooldowns-subscriber');
    this.subscriber.on('message', (_channel: string, text: string) => this.receive(text));
    this.subscriber.subscribe(COOLDOWN_CHANNEL).catch((error: unknown) => this.warn(error));
    // On every (re)connect: the cool-downs started while this gateway was not listening.
    this.client.on('ready', () => void this.catchUp());
    health.onCooldown((provider, model, coolingUntil) => this.publish(provider, model, coolingUntil));
  }

  async close(): Promise<void> {
    this.health.onCooldown(undefined);
    await Promise.all(
      [this.client, this.subscriber].map(async (connection) => {
        try {
          await connection.quit();
        } catch {
          connection.disconnect();
        }
      }),
    );
  }

  private publish(provider: string, model: string, coolingUntil: number): void {
    const message: CooldownMessage = { from: this.id, provider, model, remainingMs: coolingUntil - Date.now() };
    this.client
      .multi()
      .hset(COOLDOWN_HASH, fieldOf(provider, model), String(coolingUntil))
      .publish(COOLDOWN_CHANNEL, JSON.stringify(message))
      .exec()
      .catch((error: unknown) => this.warn(error));
  }

  private receive(text: string): void {
    let message: CooldownMessage;
    try {
      message = JSON.parse(text) as CooldownMessage;
    } catch {
      return; // not ours
    }
    if (message.from === this.id || typeof message.provider !== 'string' || typeof message.model !== 'string' || !(message.remainingMs > 0)) return;
    this.apply(message.provider, message.model, Date.now() + message.remainingMs);
  }

  private apply(provider: string, model: string, coolingUntil: number): void {
    if (!this.health.applyCooldown(provider, model, coolingUntil)) return;
    this.log.info({ provider, upstreamModel: model, coolingForMs: coolingUntil - Date.now() }, 'upstream cooling down, as another gateway saw it');
  }

  private async catchUp(): Promise<void> {
    try {
      const all = await this.client.hgetall(COOLDOWN_HASH);
      const now = Date.now();
      const ended: string[] = [];
      for (const [field, until] of Object.entries(all)) {
        const [provider, model] = JSON.parse(field) as [string, string];
        if (Number(until) > now) this.apply(provider, model, Number(until));
        else ended.push(field);
      }
      if (ended.length > 0) await this.client.hdel(COOLDOWN_HASH, ...ended);
    } catch (error) {
      this.warn(error);
    }
  }

  /** A command failed: news only when Redis is there but slow or refusing; unreachable, the Reachability says so. */
  private warn(error: unknown): void {
    if (failedForLackOfConnection(this.client, error)) return;
    const now = Date.now();
    if (now - this.lastWarning < WARNING_INTERVAL_MS) return;
    this.lastWarning = now;
    this.log.warn({ err: error, redis: redactDatabaseUrl(this.url) }, 'Redis slow or refusing commands: a cool-down was not shared (each gateway keeps its own)');
  }
}
