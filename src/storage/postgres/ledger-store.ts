// Holds, captures, releases, renewals and growths on PostgreSQL, group-committed: every write goes
// through the LedgerBatcher, which sends the writes pending at one moment as one call of
// tollgate_ledger_batch (migrations/0005-ledger-batches.sql; its latest text is 0015's): one round trip
// and one transaction per batch, each operation decided in arrival order exactly as alone. Every writer
// of several rows locks account rows first, then key rows (each in id order), then hold rows — the batch
// function, the sweeper below and the account store's credits — so concurrent gateways and the sweeper
// never deadlock one another. The cached balance/held/spent columns on accounts and api_keys move only
// together with an append-only ledger entry (docs/adr/0047-accounts.md).
import type {
  Admission,
  BudgetWindow,
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
import { NO_BUDGET, refusalOf, SHARED_SQL, usageObjectOf, type AccountAdmissionRow, type KeyAdmissionRow } from '../rows.js';
import { inTransaction, type PostgresPool } from './connection.js';
import { LedgerBatcher, type BatchOp, type BatchResult } from './ledger-batcher.js';

interface Figures {
  balance: number;
  held: number;
  spent: number;
}

/** How long a committed batch's answers are kept for a retry of it (a retry follows its failure at once). */
const BATCH_RECORD_KEEP_MS = 5 * 60_000;

/** Why the batch refused an admission, from the key's and its account's rows as it saw them. */
function refusalFrom(result: BatchResult, amount: number, now: number, budget: BudgetWindow, accountBudget: BudgetWindow | undefined) {
  const key = (result.k ?? undefined) as KeyAdmissionRow | undefined;
  const account = (result.ac ?? undefined) as AccountAdmissionRow | undefined;
  return refusalOf(key, account, amount, now, budget, accountBudget ?? NO_BUDGET);
}

/** The account budget window's parameters of an operation (NO_BUDGET when it names none). */
function accountWindow(accountBudget: BudgetWindow | undefined): Pick<BatchOp, 'acctPeriodStart' | 'acctBudget'> {
  const window = accountBudget ?? NO_BUDGET;
  return { acctPeriodStart: window.periodStart, acctBudget: window.limit };
}

/**
 * The sweeper's pass, in the batch's lock order: the accounts of the keys of the oldest expired holds are
 * locked (in id order), then those keys (in id order), then those keys' expired active holds (skipping
 * any a batch has locked right now) are marked expired, each gets its release entry (naming the key's
 * account), and each key's and each account's held column drops by their sum.
 */
const EXPIRING_ACCOUNTS_SQL = `SELECT id FROM accounts WHERE id IN (
    SELECT account_id FROM api_keys WHERE id IN (
      SELECT key_id FROM holds WHERE status = 'active' AND expires_at <= $1 ORDER BY expires_at LIMIT $2))
  ORDER BY id FOR UPDATE`;

const EXPIRING_KEYS_SQL = `SELECT id FROM api_keys WHERE account_id = ANY ($3::text[]) AND id IN (
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
  ), owned AS (
    SELECT e.request_id, e.key_id, e.amount, e.seq, k.account_id FROM expired e JOIN api_keys k ON k.id = e.key_id
  ), entries AS (
    INSERT INTO ledger_entries (account_id, key_id, request_id, kind, amount, created_at, seq)
    SELECT account_id, key_id, request_id, 'release', amount, $1, seq FROM owned
  ), keys AS (
    UPDATE api_keys SET held = api_keys.held - per_key.total
    FROM (SELECT key_id, SUM(amount)::bigint AS total FROM expired GROUP BY key_id) per_key
    WHERE api_keys.id = per_key.key_id
  ), accounts_held AS (
    UPDATE accounts SET held = accounts.held - per_account.total
    FROM (SELECT account_id, SUM(amount)::bigint AS total FROM owned GROUP BY account_id) per_account
    WHERE accounts.id = per_account.account_id
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
      ...accountWindow(hold.accountBudget),
      usage: null,
    });
    if (result.o === 'admitted') return { admitted: true };
    // What a second INSERT of the same primary key would have said: a request id is never reused.
    if (result.o === 'conflict') throw new Error(`a hold for request ${hold.requestId} already exists`);
    return refusalFrom(result, hold.amount, hold.now, hold.budget, hold.accountBudget);
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
      ...accountWindow(settlement.accountBudget),
      usage: usageObjectOf(settlement.usage),
    });
    return { outcome: result.o as SettleOutcome, charged: result.c ?? 0 };
  }

  async release(requestId: string, usage: UsageRecord | undefined, now: number): Promise<ReleaseOutcome> {
    const result = await this.submit({ op: 'release', requestId, keyId: null, amount: null, expiresAt: null, now, periodStart: null, budget: null, acctPeriodStart: null, acctBudget: null, usage: usage ? usageObjectOf(usage) : null });
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
      ...accountWindow(renewal.accountBudget),
      usage: null,
    });
    if (result.o !== 'refused') return { outcome: result.o as Exclude<RenewOutcome['outcome'], 'refused'> };
    return { outcome: 'refused', refusal: refusalFrom(result, result.a ?? 0, renewal.now, renewal.budget, renewal.accountBudget) };
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
      ...accountWindow(growth.accountBudget),
      usage: null,
    });
    if (result.o !== 'refused') return { outcome: result.o as Exclude<GrowOutcome['outcome'], 'refused'> };
    return { outcome: 'refused', refusal: refusalFrom(result, growth.amount, growth.now, growth.budget, growth.accountBudget) };
  }

  async expireHolds(now: number, limit: number): Promise<number> {
    const released = await inTransaction(this.pool, async (client) => {
      const accounts = (await client.query<{ id: string }>(EXPIRING_ACCOUNTS_SQL, [now, limit])).rows.map((row) => row.id);
      if (accounts.length === 0) return 0;
      const keys = (await client.query<{ id: string }>(EXPIRING_KEYS_SQL, [now, limit, accounts])).rows.map((row) => row.id);
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
        // The key's held and spent, and its account's balance: what a key shows (rows.ts keyRecordOf).
        const cached = (
          await client.query<Figures & { account_id: string }>(
            'SELECT a.balance, k.held, k.spent, k.account_id FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.id = $1',
            [keyId],
          )
        ).rows[0];
        const active = (await client.query<{ n: number }>("SELECT COUNT(*)::bigint AS n FROM holds WHERE key_id = $1 AND status = 'active'", [keyId])).rows[0]!;
        const zero = { balance: 0, held: 0, spent: 0 };
        if (!cached) return { cached: zero, derived: zero, activeHolds: active.n };
        const derivedKey = (await client.query<Omit<Figures, 'balance'>>(SHARED_SQL.derivedKeyFigures('$1'), [keyId])).rows[0]!;
        const derivedAccount = (await client.query<Figures>(SHARED_SQL.derivedAccountFigures('$1'), [cached.account_id])).rows[0]!;
        return {
          cached: { balance: cached.balance, held: cached.held, spent: cached.spent },
          derived: { balance: derivedAccount.balance, held: derivedKey.held, spent: derivedKey.spent },
          activeHolds: active.n,
        };
      },
      'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
    );
  }
}
