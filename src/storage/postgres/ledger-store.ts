// Holds, captures and releases on PostgreSQL, each one statement and so one transaction (READ COMMITTED).
// Row locks are always taken hold first, then key (settle and release in tollgate_close_hold, see
// migrations.ts; the sweeper), and admission locks only the key row, so concurrent requests, gateways
// and the sweeper never deadlock one another. The cached balance/held columns on api_keys move only
// together with an append-only ledger entry.
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
import { KEY_ADMISSION_COLUMNS, refusalOf, SHARED_SQL, USAGE_COLUMNS, usageValues, type KeyAdmissionRow } from '../rows.js';
import { inTransaction, type PostgresPool } from './connection.js';

interface Figures {
  balance: number;
  held: number;
  spent: number;
}

/** PostgreSQL types of the usage_records columns, in USAGE_COLUMNS order (INSERT ... SELECT needs them). */
const USAGE_TYPES = ['text', 'bigint', 'text', 'text', 'text', 'text', 'int', 'int', 'int', 'int', 'int', 'bigint', 'text', 'text', 'int'];

/**
 * The usage row, written only when the hold's outcome (`o`) is one of `outcomes`; params from $first on.
 * Its cost is what was charged (`charged` of the outcome), which a late-capped capture makes less.
 */
function usageIfOutcome(first: number, outcomes: readonly string[], andAlso = 'true'): string {
  // charged ≤ the priced cost always; naming the cost parameter keeps its type known to PostgreSQL.
  const values = USAGE_COLUMNS.map((column, i) => `${column === 'cost' ? 'LEAST(charged, ' : ''}$${first + i}::${USAGE_TYPES[i]}${column === 'cost' ? ')' : ''}`).join(', ');
  return `INSERT INTO usage_records (${USAGE_COLUMNS.join(', ')}) SELECT ${values} FROM outcome
    WHERE o IN (${outcomes.map((x) => `'${x}'`).join(', ')}) AND ${andAlso} ON CONFLICT (request_id) DO NOTHING`;
}

// Every ledger write is ONE statement (one round trip, its own transaction): the key row is locked for
// as short a time as possible, which is what bounds throughput on a busy key. Named statements are
// parsed and planned once per connection.
const SQL = {
  /**
   * Admission: the key's row is locked first, then the shared conditional UPDATE, then the hold and its
   * entry only if it admitted. A locking read returns the row's latest version (after waiting for a
   * concurrent admission to commit), so a refusal is explained with the figures it was decided on — the
   * statement's snapshot would be older and could call a budget refusal a balance one. Params: request id,
   * key id, amount, expiry, now, budget period start, effective budget.
   */
  placeHold: {
    name: 'ledger-place-hold-v3',
    text: `WITH locked AS MATERIALIZED (SELECT id, ${KEY_ADMISSION_COLUMNS} FROM api_keys WHERE id = $2 FOR UPDATE),
      admitted AS (${SHARED_SQL.admit('$3::bigint', '(SELECT id FROM locked)', '$5::bigint', '$6::bigint', '$7::bigint')} RETURNING id),
      hold AS (
        INSERT INTO holds (request_id, key_id, amount, status, expires_at, created_at)
        SELECT $1, id, $3, 'active', $4, $5 FROM admitted
      ), entry AS (
        INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at)
        SELECT id, $1, 'hold', $3, $5 FROM admitted
      )
      SELECT (SELECT COUNT(*) FROM admitted)::int AS admitted, ${KEY_ADMISSION_COLUMNS.split(', ').map((c) => `k.${c}`).join(', ')}
      FROM (SELECT 1) one LEFT JOIN locked k ON true`,
  },
  settle: {
    name: 'ledger-settle-v3',
    text: `WITH outcome AS MATERIALIZED (SELECT c.outcome AS o, c.charged FROM tollgate_close_hold($1, 'captured', $2, $3, $4, $5) c),
      usage AS (${usageIfOutcome(6, ['captured', 'late', 'late-capped'])})
      SELECT o, charged FROM outcome`,
  },
  release: {
    name: 'ledger-release-v3',
    text: `WITH outcome AS MATERIALIZED (SELECT c.outcome AS o, c.charged FROM tollgate_close_hold($1, 'released', 0, $2, 0, NULL) c),
      usage AS (${usageIfOutcome(4, ['released', 'expired'], '$3::boolean')})
      SELECT o FROM outcome`,
  },
  grow: {
    name: 'ledger-grow',
    text: `SELECT outcome, k_balance AS balance, k_held AS held, k_status AS status, k_expires_at AS expires_at,
      k_budget_spent AS budget_spent, k_budget_period_start AS budget_period_start
      FROM tollgate_grow_hold($1, $2, $3, $4, $5)`,
  },
  renew: {
    name: 'ledger-renew-v3',
    text: `SELECT outcome, hold_amount, k_balance AS balance, k_held AS held, k_status AS status, k_expires_at AS expires_at,
      k_budget_spent AS budget_spent, k_budget_period_start AS budget_period_start
      FROM tollgate_renew_hold($1, $2, $3, $4, $5)`,
  },
} as const;

/**
 * The sweeper's pass as one statement: expired active holds (oldest first, skipping any a settlement
 * has locked right now) are marked expired, each gets its release entry, and each key's held column
 * drops by the sum of its released holds.
 */
const EXPIRE_SQL = `
  WITH expired AS (
    UPDATE holds SET status = 'expired', settled_at = $1
    WHERE request_id IN (
      SELECT request_id FROM holds WHERE status = 'active' AND expires_at <= $1
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
  constructor(private readonly pool: PostgresPool) {}

  async placeHold(hold: HoldPlacement): Promise<Admission> {
    const { rows } = await this.pool.query<{ admitted: number } & { [C in keyof KeyAdmissionRow]: KeyAdmissionRow[C] | null }>({
      ...SQL.placeHold,
      values: [hold.requestId, hold.keyId, hold.amount, hold.expiresAt, hold.now, hold.budget.periodStart, hold.budget.limit],
    });
    const row = rows[0]!;
    if (row.admitted === 1) return { admitted: true };
    return refusalOf(row.status === null ? undefined : (row as KeyAdmissionRow), hold.amount, hold.now, hold.budget);
  }

  async settle(settlement: Settlement): Promise<SettleResult> {
    const { rows } = await this.pool.query<{ o: SettleOutcome; charged: number }>({
      ...SQL.settle,
      values: [settlement.requestId, settlement.cost, settlement.now, settlement.budget.periodStart, settlement.budget.limit, ...usageValues(settlement.usage)],
    });
    return { outcome: rows[0]!.o, charged: rows[0]!.charged };
  }

  async release(requestId: string, usage: UsageRecord | undefined, now: number): Promise<ReleaseOutcome> {
    // Without a usage row the INSERT's values are NULLs that its `$3` guard never lets through.
    const values = usage ? usageValues(usage) : USAGE_COLUMNS.map(() => null);
    const { rows } = await this.pool.query<{ o: ReleaseOutcome }>({ ...SQL.release, values: [requestId, now, usage !== undefined, ...values] });
    return rows[0]!.o;
  }

  async renewHold(renewal: HoldRenewal): Promise<RenewOutcome> {
    const { rows } = await this.pool.query<{ outcome: RenewOutcome['outcome']; hold_amount: number } & KeyAdmissionRow>({
      ...SQL.renew,
      values: [renewal.requestId, renewal.expiresAt, renewal.now, renewal.budget.periodStart, renewal.budget.limit],
    });
    const row = rows[0]!;
    if (row.outcome !== 'refused') return { outcome: row.outcome };
    return { outcome: 'refused', refusal: refusalOf(row.status === null ? undefined : row, row.hold_amount, renewal.now, renewal.budget) };
  }

  async growHold(growth: HoldGrowth): Promise<GrowOutcome> {
    const { rows } = await this.pool.query<{ outcome: GrowOutcome['outcome'] } & KeyAdmissionRow>({
      ...SQL.grow,
      values: [growth.requestId, growth.amount, growth.now, growth.budget.periodStart, growth.budget.limit],
    });
    const row = rows[0]!;
    if (row.outcome !== 'refused') return { outcome: row.outcome };
    return { outcome: 'refused', refusal: refusalOf(row.status === null ? undefined : row, growth.amount, growth.now, growth.budget) };
  }

  async expireHolds(now: number, limit: number): Promise<number> {
    const { rows } = await this.pool.query<{ released: number }>(EXPIRE_SQL, [now, limit]);
    return rows[0]?.released ?? 0;
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
        const derived = (await client.query<Figures>(SHARED_SQL.derivedFigures('$1'), [keyId])).rows[0]!;
        const active = (await client.query<{ n: number }>("SELECT COUNT(*)::bigint AS n FROM holds WHERE key_id = $1 AND status = 'active'", [keyId])).rows[0]!;
        const zero = { balance: 0, held: 0, spent: 0 };
        return { cached: cached ?? zero, derived: cached ? derived : zero, activeHolds: active.n };
      },
      'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
    );
  }
}
