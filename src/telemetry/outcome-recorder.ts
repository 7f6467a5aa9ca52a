// Writes what the request path leaves without moving money: the usage rows of requests that were
// refused, quoted or replayed (no ledger entry goes with them), and the per-minute count of requests
// without a valid key. Off the answer's path: rows are queued and written together once the current
// event-loop turn is done (a burst of refusals is one statement), with one write in flight at a time;
// the counts go once a second, so a flood of bad keys costs one small write per second, never a row each.
import type { Logger } from '../log.js';
import type { UsageRecord, UsageStore } from '../storage/types.js';

/** Rows queued while the database is slow or away, at most; beyond it new ones are dropped (and counted). */
const MAX_QUEUED_ROWS = 10_000;
const COUNT_FLUSH_MS = 1_000;
const MINUTE_MS = 60_000;

export interface OutcomeRecorderHooks {
  /** Rows that could not be written (the queue was full, or the database refused them). */
  dropped?(rows: number): void;
}

export class OutcomeRecorder {
  private queued: UsageRecord[] = [];
  private writing: Promise<void> | undefined;
  private scheduled = false;
  /** Minute start (epoch ms) → requests without a valid key not yet written. */
  private counts = new Map<number, number>();
  private countsWriting: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly usage: UsageStore,
    private readonly log: Logger,
    private readonly hooks: OutcomeRecorderHooks = {},
  ) {
    this.timer = setInterval(() => void this.writeCounts(), COUNT_FLUSH_MS);
    this.timer.unref();
  }

  record(row: UsageRecord): void {
    if (this.queued.length >= MAX_QUEUED_ROWS) {
      this.hooks.dropped?.(1);
      return;
    }
    this.queued.push(row);
    if (!this.scheduled && !this.writing) {
      this.scheduled = true;
      setImmediate(() => void this.writeRows());
    }
  }

  countUnauthenticated(now = Date.now()): void {
    const minute = now - (now % MINUTE_MS);
    this.counts.set(minute, (this.counts.get(minute) ?? 0) + 1);
  }

  /** Writes everything queued; the gateway calls it last, before the database closes. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    while (this.writing || this.queued.length > 0) await (this.writing ?? this.writeRows());
    await this.countsWriting;
    await this.writeCounts();
  }

  private writeRows(): Promise<void> {
    this.scheduled = false;
    if (this.writing || this.queued.length === 0) return this.writing ?? Promise.resolve();
    const rows = this.queued;
    this.queued = [];
    this.writing = this.usage
      .recordOutcomes(rows)
      .catch((error: unknown) => {
        this.hooks.dropped?.(rows.length);
        this.logFailure(error, 'usage rows of refused requests could not be written (dropped)');
      })
      .finally(() => {
        this.writing = undefined;
        // Rows that arrived meanwhile go in the next write.
        if (this.queued.length > 0 && !this.scheduled) {
          this.scheduled = true;
          setImmediate(() => void this.writeRows());
        }
      });
    return this.writing;
  }

  private writeCounts(): Promise<void> {
    if (this.countsWriting || this.counts.size === 0) return this.countsWriting ?? Promise.resolve();
    const counts = [...this.counts].map(([minute, requests]) => ({ minute, requests }));
    this.counts = new Map();
    this.countsWriting = this.usage
      .countUnauthenticated(counts)
      .catch((error: unknown) => {
        // Kept for the next try: a count is small, and losing it would hide a flood from the operator.
        for (const { minute, requests } of counts) this.counts.set(minute, (this.counts.get(minute) ?? 0) + requests);
        this.logFailure(error, 'the count of requests without a valid key could not be written (kept for the next try)');
      })
      .finally(() => (this.countsWriting = undefined));
    return this.countsWriting;
  }

  /**
   * At debug: a failed write means the database is away or refusing writes, which its reachability line
   * (telemetry/reachability.ts) already says once; the dropped rows are counted in the metrics.
   */
  private logFailure(error: unknown, message: string): void {
    this.log.debug({ err: error }, message);
  }
}
