// Delivers the outbox (docs/adr/0052-signed-webhooks.md): at least once, to the configured endpoints only.
// Every poll it leases due rows (one deliverer at a time per row, across processes and gateways: the
// store's lease), posts each to the endpoints that want it and have not answered it yet, and records the
// round: delivered when all answered 2xx, else a retry after an exponential back-off, until 24 h have
// passed (then failed). A process that dies mid-delivery leaves its lease to lapse, and the row is
// delivered by whoever leases it next: a receiver may see an event twice (the same webhook-id), never
// zero times.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Agent, request } from 'undici';
import type { NotificationsConfig, WebhookEndpoint } from '../config/types.js';
import type { Logger } from '../log.js';
import type { WebhookAttemptResult, WebhookEventRecord, WebhookStore } from '../storage/types.js';
import { nextAttemptAt } from './backoff.js';
import { targetsOf } from './endpoints.js';
import { signDelivery } from './signing.js';

/** How often the outbox is looked at for due rows. */
const POLL_MS = 1_000;
/** Rows leased per round. */
const BATCH = 20;
/** What a lease covers beyond one delivery's timeout (the round's bookkeeping). */
const LEASE_SLACK_MS = 5_000;

export interface DeliveryMetrics {
  /** One endpoint's answer to one attempt: ok (2xx) or failed. */
  delivery(outcome: 'ok' | 'failed'): void;
}

export class WebhookDeliverer {
  private readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly agent: Agent;
  private readonly stopping = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly store: WebhookStore,
    private readonly config: NotificationsConfig,
    private readonly log: Logger,
    private readonly metrics: DeliveryMetrics = { delivery: () => {} },
    private readonly now: () => number = Date.now,
  ) {
    this.agent = new Agent({ connectTimeout: config.timeoutMs, headersTimeout: config.timeoutMs, bodyTimeout: config.timeoutMs });
  }

  start(): void {
    if (this.stopped || this.timer) return;
    const tick = () => {
      this.round = this.runOnce()
        .then(() => undefined)
        .catch((error: unknown) => this.log.warn({ err: error }, 'webhook delivery round failed; retrying'))
        .finally(() => {
          this.round = undefined;
          if (!this.stopped) this.timer = setTimeout(tick, POLL_MS);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  /** Stops polling; a delivery in flight is cut and its row released for another round (at least once). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.stopping.abort();
    await this.round;
    await this.agent.close().catch(() => undefined);
  }

  /** One round: lease the due rows and deliver them. Returns how many rows were leased. */
  async runOnce(): Promise<number> {
    const leaseMs = this.config.timeoutMs + LEASE_SLACK_MS;
    const events = await this.store.claim({ owner: this.owner, now: this.now(), leaseMs, limit: BATCH });
    await Promise.all(events.map((event) => this.deliver(event)));
    return events.length;
  }

  private async deliver(event: WebhookEventRecord): Promise<void> {
    const targets = targetsOf(this.config.webhooks, event);
    let result: WebhookAttemptResult;
    if (targets.length === 0) {
      result = { outcome: event.deliveredTo.length > 0 ? 'delivered' : 'skipped', deliveredTo: event.deliveredTo };
    } else {
      const answers = await Promise.all(targets.map((endpoint) => this.post(endpoint, event)));
      if (this.stopping.signal.aborted) result = { outcome: 'released' };
      else {
        const deliveredTo = [...event.deliveredTo, ...targets.filter((_, i) => answers[i] === undefined).map((t) => t.url)];
        const errors = answers.filter((a): a is string => a !== undefined);
        if (errors.length === 0) result = { outcome: 'delivered', deliveredTo };
        else {
          const now = this.now();
          const next = nextAttemptAt(event.attempts + 1, event.retryFrom, now, this.config);
          const error = errors.join('; ');
          result = next === undefined ? { outcome: 'failed', deliveredTo, error } : { outcome: 'retry', deliveredTo, error, nextAttemptAt: next };
          this.log.warn({ event: event.messageId, type: event.type, attempts: event.attempts + 1, error, nextAttemptAt: next }, next === undefined ? 'webhook failed for good' : 'webhook delivery failed; will retry');
        }
      }
    }
    await this.store.complete(event.id, this.owner, result, this.now());
  }

  /** Posts one event to one endpoint: undefined when it answered 2xx, else what went wrong. */
  private async post(endpoint: WebhookEndpoint, event: WebhookEventRecord): Promise<string | undefined> {
    const { body, headers } = signDelivery(endpoint.secret, event, this.now());
    try {
      const answer = await request(endpoint.url, {
        method: 'POST',
        headers,
        body,
        dispatcher: this.agent,
        signal: AbortSignal.any([this.stopping.signal, AbortSignal.timeout(this.config.timeoutMs)]),
      });
      await answer.body.dump().catch(() => undefined);
      const ok = answer.statusCode >= 200 && answer.statusCode < 300;
      this.metrics.delivery(ok ? 'ok' : 'failed');
      return ok ? undefined : `${endpoint.url}: HTTP ${answer.statusCode}`;
    } catch (error) {
      if (!this.stopping.signal.aborted) this.metrics.delivery('failed');
      const message = error instanceof Error ? (error.name === 'TimeoutError' ? `no answer within ${this.config.timeoutMs} ms` : error.message) : String(error);
      return `${endpoint.url}: ${message}`;
    }
  }
}
