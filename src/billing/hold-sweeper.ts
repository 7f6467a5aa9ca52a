// Releases holds whose expiry has passed (a crashed process, a request that never settled), so no
// hold outlives its TTL by more than one sweep interval; and deletes Idempotency-Key records and stored
// Responses ids past their keeping time.
import type { Logger } from 'pino';
import type { IdempotencyStore, LedgerStore, ResponseStateStore } from '../storage/types.js';

const BATCH = 500;

export class HoldSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly store: LedgerStore,
    private readonly idempotency: IdempotencyStore,
    private readonly intervalSeconds: number,
    private readonly log: Logger,
    private readonly responses?: ResponseStateStore,
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
      const responses = this.responses;
      if (responses) {
        const deleted = await drain((limit) => responses.expire(Date.now(), limit));
        if (deleted > 0) this.log.debug({ deleted }, 'sweeper: deleted expired Responses ids');
      }
    } catch (error) {
      this.log.error({ err: error }, 'sweeper: failed');
    }
  }
}

/** Runs a batched delete until a batch comes back short; returns how many it deleted in all. */
async function drain(batch: (limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const count = await batch(BATCH);
    total += count;
    if (count < BATCH) return total;
  }
}
