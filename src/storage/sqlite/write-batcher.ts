// Group commit for the request path: the ledger writes that arrive in one event-loop turn (holds,
// settlements, releases from many concurrent requests) run in ONE SQLite transaction, and every caller's
// promise resolves only after that transaction has committed. Each operation stays atomic and in arrival
// order (admission still sees every earlier hold), but the per-commit cost — locks, WAL frame writes, the
// shared pages of the key row and index tails — is paid once per batch instead of once per request
// (docs/adr/0009-group-commit.md).
//
// Atomic without a savepoint each, in the common case: a write that returns has applied all of itself, and
// a write throws only on a fault (a constraint a bug broke, a full disk). So the batch first runs every write
// bare; if one throws, the whole batch is rolled back and run again with each write in its own savepoint,
// which undoes the failing write alone (its caller gets the error, the others their results). Two
// savepoints per request cost about 30 µs of CPU on SQLite (SAVEPOINT and RELEASE are statements), more
// than the rest of a hold and its settlement's bookkeeping. A write must therefore only touch this
// database, and may run twice: the second run sees the database as the first did.
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

/** A write threw during the bare run (as opposed to BEGIN or COMMIT failing): run the batch guarded. */
class WriteFailed extends Error {
  constructor(readonly failure: unknown) {
    super('a write of the batch failed', { cause: failure });
  }
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
  /** The common case: every write bare, in one transaction; the first throw rolls all of them back. */
  private readonly runBare: { immediate(writes: PendingWrite[]): void };
  /** After a throw: every write in its own savepoint, so a failing one is undone alone. */
  private readonly runGuarded: { immediate(writes: PendingWrite[]): void };

  constructor(
    db: SqliteDatabase,
    /** Told when writes fail because the database cannot take any, and when a batch commits again. */
    private readonly reachability?: ReachabilityObserver,
  ) {
    this.runBare = db.transaction((writes: PendingWrite[]) => {
      for (const write of writes) {
        try {
          write.outcome = { ok: true, value: write.run() };
        } catch (error) {
          throw new WriteFailed(error);
        }
      }
    });
    const inSavepoint = db.transaction((run: () => unknown) => run());
    this.runGuarded = db.transaction((writes: PendingWrite[]) => {
      for (const write of writes) {
        try {
          // Nested in the batch's transaction, a better-sqlite3 transaction function is a savepoint.
          write.outcome = { ok: true, value: inSavepoint(write.run) };
        } catch (error) {
          write.outcome = { ok: false, error };
        }
      }
    });
  }

  /**
   * Queues `run` for the next batch; resolves with its result once the batch has committed. `run` writes
   * only this database and may be run a second time after a rollback (see the top of this file).
   */
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
      try {
        this.runBare.immediate(writes);
      } catch (error) {
        if (!(error instanceof WriteFailed)) throw error;
        // Rolled back: nothing of this batch stays. Once more, each write alone.
        this.runGuarded.immediate(writes);
      }
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
