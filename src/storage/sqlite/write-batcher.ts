// Group commit for the request path: the ledger writes that arrive in one event-loop turn (holds,
// settlements, releases from many concurrent requests) run in ONE SQLite transaction, each inside its
// own savepoint, and every caller's promise resolves only after that transaction has committed. Each
// operation stays atomic and in arrival order (admission still sees every earlier hold), but the
// per-commit cost — locks, WAL frame writes, the shared pages of the key row and index tails — is paid
// once per batch instead of once per request (docs/adr/0009-group-commit.md).
import type { ReachabilityObserver } from '../types.js';
import type { SqliteDatabase } from './connection.js';

/**
 * SQLite's result codes that say the database cannot take writes at all (locked by another process past
 * the busy timeout, read-only, an I/O error, a full disk, a damaged file), not that one write was wrong.
 */
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|READONLY|IOERR|FULL|CANTOPEN|CORRUPT|NOTADB|PROTOCOL)/;

function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && UNAVAILABLE.test(code);
}

interface PendingWrite {
  readonly run: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  outcome?: { ok: true; value: unknown } | { ok: false; error: unknown };
}

export class WriteBatcher {
  private queue: PendingWrite[] = [];
  private scheduled = false;
  private readonly runBatch: { immediate(writes: PendingWrite[]): void };

  constructor(
    db: SqliteDatabase,
    /** Told when writes fail because the database cannot take any, and when a batch commits again. */
    private readonly reachability?: ReachabilityObserver,
  ) {
    this.runBatch = db.transaction((writes: PendingWrite[]) => {
      for (const write of writes) {
        try {
          // `run` is itself a better-sqlite3 transaction function: nested, it becomes a savepoint
          // that is rolled back alone if it throws.
          write.outcome = { ok: true, value: write.run() };
        } catch (error) {
          write.outcome = { ok: false, error };
        }
      }
    });
  }

  /** Queues `run` for the next batch; resolves with its result once the batch has committed. */
  enqueue<T>(run: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  /** Runs everything queued now (also called before the database closes). */
  readonly flush = (): void => {
    this.scheduled = false;
    const writes = this.queue;
    if (writes.length === 0) return;
    this.queue = [];
    try {
      this.runBatch.immediate(writes);
    } catch (error) {
      // BEGIN or COMMIT failed (e.g. another process held the lock too long): nothing was written.
      if (isUnavailable(error)) this.reachability?.failed(error);
      for (const write of writes) write.reject(error);
      return;
    }
    let unavailable: unknown;
    for (const write of writes) {
      const outcome = write.outcome!;
      if (outcome.ok) write.resolve(outcome.value);
      else {
        if (isUnavailable(outcome.error)) unavailable ??= outcome.error;
        write.reject(outcome.error);
      }
    }
    if (unavailable === undefined) this.reachability?.succeeded();
    else this.reachability?.failed(unavailable);
  };
}
