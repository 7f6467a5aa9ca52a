// Group commit for the PostgreSQL ledger: the holds, settlements, releases, renewals and growths one
// gateway has pending go to the database together, as ONE call of tollgate_ledger_batch (one round trip,
// one transaction, operations applied in arrival order; the call releases the batch's locks at commit and
// answers once that commit is on disk, migration 9). One batch is in flight at a time; whatever
// arrives meanwhile waits for it and goes as the next batch the moment it returns, so no request waits
// more than one batch round trip behind the one it missed (docs/adr/0009-group-commit.md).
import { randomUUID } from 'node:crypto';
import type { PostgresPool } from './connection.js';

export type BatchOpKind = 'hold' | 'settle' | 'release' | 'renew' | 'grow';

/** One ledger write; the fields a kind does not use stay null (see the ledger-batches migration for which are used). */
export interface BatchOp {
  readonly op: BatchOpKind;
  readonly requestId: string;
  readonly keyId: string | null;
  readonly amount: number | null;
  readonly expiresAt: number | null;
  readonly now: number;
  readonly periodStart: number | null;
  readonly budget: number | null;
  /** The account's budget window (NO_BUDGET when it has none): null where the kind uses none. */
  readonly acctPeriodStart: number | null;
  readonly acctBudget: number | null;
  /** The usage row (USAGE_COLUMNS → value) of a settlement or release, or null. */
  readonly usage: Record<string, unknown> | null;
}

/**
 * One operation's answer, as tollgate_ledger_batch returns it (o: outcome, c: charged, a: hold amount;
 * on a refusal, k: the key's row and ac: its account's, as admission saw them).
 */
export interface BatchResult {
  readonly o: string;
  readonly c?: number;
  readonly a?: number | null;
  readonly k?: Record<string, unknown> | null;
  readonly ac?: Record<string, unknown> | null;
}

interface Pending {
  readonly op: BatchOp;
  readonly resolve: (result: BatchResult) => void;
  readonly reject: (error: unknown) => void;
}

/** The most operations in one call: bounds the time the key rows stay locked and the parameters' size. */
const MAX_BATCH = 512;

/** The prepared statement's name: the fault-injection proxy in the tests finds the batch by it. */
export const BATCH_STATEMENT_NAME = 'ledger-batch-v3';

/**
 * A CALL, not a SELECT: the procedure commits the batch (releasing its key locks) and then waits for it to
 * be on disk before answering (migration 9), which a function, running inside the caller's transaction, cannot.
 */
const BATCH_SQL = {
  name: BATCH_STATEMENT_NAME,
  text: `CALL tollgate_commit_ledger_batch($1, $2, $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[],
    $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::jsonb, NULL)`,
};

/**
 * How a failed batch is retried, from the error's SQLSTATE: undefined when the outcome is in doubt (the
 * connection dropped: it may have committed), else the server's code (it certainly rolled back).
 */
function definiteCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return undefined;
  // Connection exceptions and an administrator's or the server's shutdown: the answer never came.
  if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03') return undefined;
  return code;
}

export class LedgerBatcher {
  private queue: Pending[] = [];
  private inFlight = false;
  private scheduled = false;
  private idle: Array<() => void> = [];

  constructor(private readonly pool: PostgresPool) {}

  /** Queues `op` for the next batch; resolves with its answer once that batch has committed. */
  submit(op: BatchOp): Promise<BatchResult> {
    return new Promise<BatchResult>((resolve, reject) => {
      this.queue.push({ op, resolve, reject });
      // Gathers what arrives in this event-loop turn; while a batch is in flight, its return flushes.
      if (!this.inFlight && !this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  /** Resolves once nothing is queued or in flight (before the pool closes). */
  drained(): Promise<void> {
    if (!this.inFlight && this.queue.length === 0) return Promise.resolve();
    return new Promise((done) => this.idle.push(done));
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    if (this.inFlight) return;
    if (this.queue.length === 0) {
      for (const done of this.idle.splice(0)) done();
      return;
    }
    const batch = this.queue.splice(0, MAX_BATCH);
    this.inFlight = true;
    void this.run(batch).finally(() => {
      this.inFlight = false;
      this.flush();
    });
  };

  /**
   * Sends the batch and answers each of its requests. A batch in doubt (the connection dropped) is sent
   * once more under the same id: if it had committed, the database replays its recorded answers instead
   * of applying it again. A deadlock victim (rolled back) is sent once more. A batch the server rolled
   * back for one operation's sake is split, so the others still go through and that one gets its error.
   */
  private async run(batch: Pending[]): Promise<void> {
    const id = randomUUID();
    try {
      answer(batch, await this.call(id, batch));
      return;
    } catch (error) {
      const code = definiteCode(error);
      if (code === undefined || code.startsWith('40')) {
        try {
          answer(batch, await this.call(code === undefined ? id : randomUUID(), batch));
        } catch (again) {
          for (const pending of batch) pending.reject(again);
        }
        return;
      }
      // One operation's own error, or a lock wait that timed out (the database is busy: fail fast).
      if (batch.length === 1 || code === '55P03') {
        for (const pending of batch) pending.reject(error);
        return;
      }
    }
    for (const pending of batch) await this.run([pending]);
  }

  private async call(id: string, batch: Pending[]): Promise<BatchResult[]> {
    const ops = batch.map((p) => p.op);
    const { rows } = await this.pool.query<{ results: BatchResult[] }>({
      ...BATCH_SQL,
      values: [
        id,
        Date.now(),
        ops.map((o) => o.op),
        ops.map((o) => o.requestId),
        ops.map((o) => o.keyId),
        ops.map((o) => o.amount),
        ops.map((o) => o.expiresAt),
        ops.map((o) => o.now),
        ops.map((o) => o.periodStart),
        ops.map((o) => o.budget),
        ops.map((o) => o.acctPeriodStart),
        ops.map((o) => o.acctBudget),
        JSON.stringify(ops.map((o) => o.usage)),
      ],
    });
    const results = rows[0]?.results;
    if (!Array.isArray(results) || results.length !== batch.length) throw new Error('tollgate_ledger_batch: unexpected answer');
    return results;
  }
}

function answer(batch: Pending[], results: BatchResult[]): void {
  batch.forEach((pending, i) => pending.resolve(results[i]!));
}
