// The notification scanner (docs/adr/0052-signed-webhooks.md): every scan_interval_seconds, one store
// transaction finds the threshold and time conditions (balance.low, budget.reached, key.expiring) that
// hold and were not announced, and writes each event with its marker. Nothing of it runs on a request's
// path: placeHold and settle stay as they were. The same pass deletes settled events older than
// notifications.keep_days (a bounded batch each time), so the outbox does not grow for ever.
import type { Config } from '../config/types.js';
import type { Logger } from '../log.js';
import type { WebhookStore } from '../storage/types.js';

/** Settled events deleted per scan at most: a long backlog goes over several scans, none holding the database long. */
const PRUNE_BATCH = 1_000;

export class NotificationScanner {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly store: WebhookStore,
    private readonly config: Pick<Config, 'notifications' | 'limits'>,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.config.notifications.scanIntervalMs);
    this.timer.unref();
    void this.tick();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One scan; returns the events it wrote. */
  async scanOnce(): Promise<number> {
    return this.store.scan({
      now: this.now(),
      balanceLow: this.config.notifications.balanceLow,
      keyBudget: this.config.limits.budget,
      keyBudgetPeriod: this.config.limits.budgetPeriod,
    });
  }

  /** Deletes up to PRUNE_BATCH settled events past their keeping time; returns how many. */
  pruneOnce(): Promise<number> {
    return this.store.prune(this.now() - this.config.notifications.keepMs, PRUNE_BATCH);
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    this.running = this.scanOnce()
      .then(async (written) => {
        if (written > 0) this.log.info({ events: written }, 'notification scan wrote webhook events');
        const pruned = await this.pruneOnce();
        if (pruned > 0) this.log.info({ events: pruned }, 'deleted settled webhook events past notifications.keep_days');
      })
      .catch((error: unknown) => this.log.warn({ err: error }, 'notification scan failed; the next one retries'))
      .finally(() => (this.running = undefined));
    await this.running;
  }
}
