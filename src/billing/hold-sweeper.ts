// Releases holds whose expiry has passed (a crashed process, a request that never settled), so no
// hold outlives its TTL by more than one sweep interval; and deletes Idempotency-Key records past
// their keeping time.
import type { Logger } from 'pino';
import type { IdempotencyStore, LedgerStore } from '../storage/types.js';

const BATCH = 500;

export class HoldSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly store: LedgerStore,
    private readonly idempotency: IdempotencyStore,
    private readonly intervalSeconds: number,
    private readonly log: Logger,
  ) {}

  start(): void {
    void this.sweep();
    this.timer = setInterval(() => void this.sweep(), this.intervalSeconds * 1000);
    this.timer.unref();
  }

  /** Runs one sweep (also callable directly); concurrent calls share the running one. */
  sweep(): Promise<void> {
    this.running ??= this.sweepAll().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  private async sweepAll(): Promise<void> {
    try {
      let released = 0;
      for (;;) {
        const batch = await this.store.expireHolds(Date.now(), BATCH);
        released += batch;
        if (batch < BATCH) break;
      }
      if (released > 0) this.log.info({ released }, 'sweeper: released expired holds');
      let forgotten = 0;
      for (;;) {
        const batch = await this.idempotency.expire(Date.now(), BATCH);
        forgotten += batch;
        if (batch < BATCH) break;
      }
      if (forgotten > 0) this.log.debug({ forgotten }, 'sweeper: deleted expired Idempotency-Key records');
    } catch (error) {
      this.log.error({ err: error }, 'sweeper: failed');
    }
  }
}
