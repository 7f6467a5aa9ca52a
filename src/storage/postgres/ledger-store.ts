// Holds, captures, releases, renewals and growths on PostgreSQL, group-committed: every write goes
// through the LedgerBatcher, which sends the writes pending at one moment as one call of
// tollgate_ledger_batch (migrations/0005-ledger-batches.sql; its latest text is 0011's): one round trip
// and one transaction per batch, each operation decided in arrival order exactly as alone. Every writer
// of several rows locks key rows first (in id order), then hold rows — the batch function and the
// sweeper below — so concurrent gateways and the sweeper never deadlock one another. The cached
// balance/held columns on api_keys move only together with an append-only ledger entry.
import type {
  Admission,
  GrowOutcome,
  HoldGrowth,
  HoldPlacement,
  HoldRenewal,
  LedgerAudit,
  LedgerStore,
  ReleaseOutcome,
  RenewOutcome,
  Settlement,
  SettleOutcome,
  SettleResult,
  UsageRecord,
  LedgerViolation,
} from '../types.js';
import { auditQueries, runAuditQueries, violationsFrom, type AuditScope } from '../ledger-audit.js';
import { refusalOf, SHARED_SQL, usageObjectOf, type KeyAdmissionRow } from '../rows.js';
import { inTransaction, type PostgresPool } from './connection.js';
import { LedgerBatcher, type BatchOp, type BatchResult } from './ledger-batcher.js';

interface Figures {
  balance: number;
  held: number;
  spent: number;
}

/** How long a committed batch's answers are kept for a retry of it (a retry follows its failure at once). */
const BATCH_RECORD_KEEP_MS = 5 * 60_000;

function keyRowOf(result: BatchResult): KeyAdmissionRow | undefined {
  return (result.k ?? undefined) as KeyAdmissionRow | undefined;
}

/**
 * The sweeper's pass: the keys of the oldest expired holds are locked first (in id order, as a batch
 * locks them), then those keys' expired active holds (skipping any a batch has locked right now) are
 * marked expired, each gets its release entry, and each key's held column drops by their sum.
 */
const EXPIRING_KEYS_SQL = `SELECT id FROM api_keys WHERE id IN (
    SELECT key_id FROM holds WHERE status = 'active' AND expires_at <= $1 ORDER BY expires_at LIMIT $2)
  ORDER BY id FOR UPDATE`;

const EXPIRE_SQL = `
  WITH expired AS (
    UPDATE holds SET status = 'expired', settled_at = $1
    WHERE request_id IN (
      SELECT request_id FROM holds WHERE status = 'active' AND expires_at <= $1 AND key_id = ANY ($3::text[])
      ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED
    ) AND status = 'active'
    RETURNING request_id, key_id, amount, seq
  ), entries AS (
    INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at, seq)
    SELECT key_id, request_id, 'release', amount, $1, seq FROM expired
  ), keys AS (
    UPDATE api_keys SET held = api_keys.held - per_key.total
    FROM (SELECT key_id, SUM(amount)::bigint AS total FROM expired GROUP BY key_id) per_key
    WHERE api_keys.id = per_key.key_id
  )
  SELECT COUNT(*)::bigint AS released FROM expired`;

export class PostgresLedgerStore implements LedgerStore {
  private readonly batcher: LedgerBatcher;

  constructor(private readonly pool: PostgresPool) {
    this.batcher = new LedgerBatcher(pool);
  }

  /** Resolves once no write is queued or in flight. */
  drained(): Promise<void> {
    return this.batcher.drained();
  }

  async placeHold(hold: HoldPlacement): Promise<Admission> {
    const result = await this.submit({
      op: 'hold',
      requestId: hold.requestId,
      keyId: hold.keyId,
      amount: hold.amount,
      expiresAt: hold.expiresAt,
      now: hold.now,
      periodStart: hold.budget.periodStart,
      budget: hold.budget.limit,
      usage: null,
    });
    if (result.o === 'admitted') return { admitted: true };
    // What a second INSERT of the same primary key would have said: a request id is never reused.
    if (result.o === 'conflict') throw new Error(`a hold for request ${hold.requestId} already exists`);
    return refusalOf(keyRowOf(result), undefined /* PostgreSQL accounts: in progress */, hold.amount, hold.now, hold.budget);
  }

  async settle(settlement: Settlement): Promise<SettleResult> {
    const result = await this.submit({
      op: 'settle',
      requestId: settlement.requestId,
      keyId: null,
      amount: settlement.cost,
      expiresAt: null,
      now: settlement.now,
      periodStart: settlement.budget.periodStart,
      budget: settlement.budget.limit,
      usage: usageObjectOf(settlement.usage),
    });
    return { outcome: result.o as SettleOutcome, charged: result.c ?? 0 };
  }

  async release(requestId: string, usage: UsageRecord | undefined, now: number): Promise<ReleaseOutcome> {
    const result = await this.submit({ op: 'release', requestId, keyId: null, amount: null, expiresAt: null, now, periodStart: null, budget: null, usage: usage ? usageObjectOf(usage) : null });
    return result.o as ReleaseOutcome;
  }

  async renewHold(renewal: HoldRenewal): Promise<RenewOutcome> {
    const result = await this.submit({
      op: 'renew',
      requestId: renewal.requestId,
      keyId: null,
      amount: null,
      expiresAt: renewal.expiresAt,
      now: renewal.now,
      periodStart: renewal.budget.periodStart,
      budget: renewal.budget.limit,
      usage: null,
    });
    if (result.o !== 'refused') return { outcome: result.o as Exclude<RenewOutcome['outcome'], 'refused'> };
    return { outcome: 'refused', refusal: refusalOf(keyRowOf(result), undefined /* PostgreSQL accounts: in progress */, result.a ?? 0, renewal.now, renewal.budget) };
  }

  async growHold(growth: HoldGrowth): Promise<GrowOutcome> {
    const result = await this.submit({
      op: 'grow',
      requestId: growth.requestId,
      keyId: null,
      amount: growth.amount,
      expiresAt: null,
      now: growth.now,
      periodStart: growth.budget.periodStart,
      budget: growth.budget.limit,
      usage: null,
    });
    if (result.o !== 'refused') return { outcome: result.o as Exclude<GrowOutcome['outcome'], 'refused'> };
    return { outcome: 'refused', refusal: refusalOf(keyRowOf(result), undefined /* PostgreSQL accounts: in progress */, growth.amount, growth.now, growth.budget) };
  }

  async expireHolds(now: number, limit: number): Promise<number> {
    const released = await inTransaction(this.pool, async (client) => {
      const keys = (await client.query<{ id: string }>(EXPIRING_KEYS_SQL, [now, limit])).rows.map((row) => row.id);
      if (keys.length === 0) return 0;
      return (await client.query<{ released: number }>(EXPIRE_SQL, [now, limit, keys])).rows[0]?.released ?? 0;
    });
    await this.pool.query('DELETE FROM ledger_batches WHERE created_at < $1', [Date.now() - BATCH_RECORD_KEEP_MS]);
    return released;
  }

  private submit(op: BatchOp): Promise<BatchResult> {
    return this.batcher.submit(op);
  }

  findViolations(scope: AuditScope): Promise<LedgerViolation[]> {
    // One REPEATABLE READ snapshot for every check.
    return inTransaction(
      this.pool,
      async (client) =>
        violationsFrom(
          await runAuditQueries(auditQueries(scope), async ({ sql, params }) => {
            let i = 0;
            const text = sql.replace(/\?/g, () => `$${++i}`);
            return (await client.query<Record<string, unknown>>(text, [...params])).rows;
          }),
        ),
      'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
    );
  }

  audit(keyId: string): Promise<LedgerAudit> {
    // One snapshot for all three reads, so a concurrent request cannot make them disagree.
    return inTransaction(
      this.pool,
      async (client): Promise<LedgerAudit> => {
        const cached = (await client.query<Figures>('SELECT balance, held, spent FROM api_keys WHERE id = $1', [keyId])).rows[0];
        const derived = (await client.query<Figures>(SHARED_SQL.derivedAccountFigures('$1'), [keyId])).rows[0]!;
        const active = (await client.query<{ n: number }>("SELECT COUNT(*)::bigint AS n FROM holds WHERE key_id = $1 AND status = 'active'", [keyId])).rows[0]!;
        const zero = { balance: 0, held: 0, spent: 0 };
        return { cached: cached ?? zero, derived: cached ? derived : zero, activeHolds: active.n };
      },
      'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
    );
  }
}
