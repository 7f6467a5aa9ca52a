// The whole-database checks of the billing invariants (testing.md; `tollgate audit`, product.md §13), as
// SQL both dialects run unchanged: each query returns the rows that break one rule, or the figures to
// compare. Read in one snapshot by each store, so a request that settles meanwhile cannot look broken.
import type { AuditScope, LedgerViolation } from './types.js';

export type { AuditScope };

/** One read-only query; `?` placeholders (the PostgreSQL store rewrites them to $n). */
export interface AuditQuery {
  readonly sql: string;
  readonly params: readonly unknown[];
}

type Rows = Array<Record<string, unknown>>;
const CHECKS = ['figures', 'accountFigures', 'held', 'accountSums', 'holds', 'captures', 'orphans', 'stale'] as const;
export type AuditQueries = Record<(typeof CHECKS)[number], AuditQuery>;
export type AuditRows = Record<(typeof CHECKS)[number], Rows>;

/** Runs every query of `queries` (one snapshot) and returns their rows by name. */
export async function runAuditQueries(queries: AuditQueries, run: (query: AuditQuery) => Promise<Rows>): Promise<AuditRows> {
  const out: Partial<AuditRows> = {};
  for (const name of CHECKS) out[name] = await run(queries[name]);
  return out as AuditRows;
}

const n = (value: unknown): number => Number(value ?? 0);
const str = (value: unknown): string => String(value);

function filter(column: string, scope: AuditScope): { sql: string; params: unknown[] } {
  return scope.keyId === undefined ? { sql: '', params: [] } : { sql: ` AND ${column} = ?`, params: [scope.keyId] };
}

/** The queries of every check, for one key or the whole database. */
export function auditQueries(scope: AuditScope): AuditQueries {
  const byKey = filter('k.id', scope);
  const byHoldKey = filter('h.key_id', scope);
  const byEntryKey = filter('e.key_id', scope);
  const byAccountOfKey =
    scope.keyId === undefined ? { sql: '', params: [] } : { sql: ' AND a.id = (SELECT account_id FROM api_keys WHERE id = ?)', params: [scope.keyId] };
  return {
    // 1. Cached held / spent on the key equal the values derived from its append-only entries.
    figures: {
      sql: `SELECT k.id AS key_id, k.held, k.spent,
       CAST(COALESCE(SUM(CASE e.kind WHEN 'hold' THEN e.amount WHEN 'release' THEN -e.amount ELSE 0 END), 0) AS BIGINT) AS d_held,
       CAST(COALESCE(SUM(CASE e.kind WHEN 'capture' THEN e.amount ELSE 0 END), 0) AS BIGINT) AS d_spent
     FROM api_keys k LEFT JOIN ledger_entries e ON e.key_id = k.id
     WHERE 1 = 1${byKey.sql}
     GROUP BY k.id, k.held, k.spent ORDER BY k.id`,
      params: byKey.params,
    },
    // 1b. Cached balance / held / spent on the account equal the values derived from its entries (the
    // key's account only, when auditing one key).
    accountFigures: {
      sql: `SELECT a.id AS account_id, a.balance, a.held, a.spent,
       CAST(COALESCE(SUM(CASE e.kind WHEN 'topup' THEN e.amount WHEN 'adjust' THEN e.amount WHEN 'capture' THEN -e.amount ELSE 0 END), 0) AS BIGINT) AS d_balance,
       CAST(COALESCE(SUM(CASE e.kind WHEN 'hold' THEN e.amount WHEN 'release' THEN -e.amount ELSE 0 END), 0) AS BIGINT) AS d_held,
       CAST(COALESCE(SUM(CASE e.kind WHEN 'capture' THEN e.amount ELSE 0 END), 0) AS BIGINT) AS d_spent
     FROM accounts a LEFT JOIN ledger_entries e ON e.account_id = a.id
     WHERE 1 = 1${byAccountOfKey.sql}
     GROUP BY a.id, a.balance, a.held, a.spent ORDER BY a.id`,
      params: byAccountOfKey.params,
    },
    // 2. The key's held equals the sum of its active holds.
    held: {
      sql: `SELECT k.id AS key_id, k.held, CAST(COALESCE(SUM(h.amount), 0) AS BIGINT) AS active
     FROM api_keys k LEFT JOIN holds h ON h.key_id = k.id AND h.status = 'active'
     WHERE 1 = 1${byKey.sql} GROUP BY k.id, k.held ORDER BY k.id`,
      params: byKey.params,
    },
    // 2b. The account's held and spent equal the sums of its keys' (every capture and hold is a key's).
    accountSums: {
      sql: `SELECT a.id AS account_id, a.held, a.spent,
       CAST(COALESCE(SUM(k.held), 0) AS BIGINT) AS keys_held, CAST(COALESCE(SUM(k.spent), 0) AS BIGINT) AS keys_spent
     FROM accounts a LEFT JOIN api_keys k ON k.account_id = a.id
     WHERE 1 = 1${byAccountOfKey.sql} GROUP BY a.id, a.held, a.spent ORDER BY a.id`,
      params: byAccountOfKey.params,
    },
    // 3. Every hold ends exactly once (see violationsFrom).
    holds: {
      sql: `SELECT h.request_id, h.key_id, h.status, h.amount,
       CAST(COALESCE(SUM(CASE e.kind WHEN 'hold' THEN e.amount WHEN 'release' THEN -e.amount ELSE 0 END), 0) AS BIGINT) AS open_amount,
       CAST(COALESCE(SUM(CASE WHEN e.kind = 'release' THEN 1 ELSE 0 END), 0) AS BIGINT) AS releases,
       CAST(COALESCE(SUM(CASE WHEN e.kind = 'hold' THEN 1 ELSE 0 END), 0) AS BIGINT) AS hold_entries,
       CAST(COALESCE(SUM(CASE WHEN e.kind = 'capture' THEN 1 ELSE 0 END), 0) AS BIGINT) AS captures
     FROM holds h LEFT JOIN ledger_entries e ON e.request_id = h.request_id AND e.key_id = h.key_id AND e.kind IN ('hold', 'release', 'capture')
     WHERE 1 = 1${byHoldKey.sql}
     GROUP BY h.request_id, h.key_id, h.status, h.amount ORDER BY h.request_id`,
      params: byHoldKey.params,
    },
    // 4. One usage row per capture, recording what was charged.
    captures: {
      sql: `SELECT e.request_id, e.key_id, e.amount, u.cost, u.request_id AS usage_request
     FROM ledger_entries e LEFT JOIN usage_records u ON u.request_id = e.request_id
     WHERE e.kind = 'capture'${byEntryKey.sql} AND (u.request_id IS NULL OR u.cost <> e.amount) ORDER BY e.request_id`,
      params: byEntryKey.params,
    },
    // 5. Hold, capture and release entries belong to a hold.
    orphans: {
      sql: `SELECT e.request_id, e.key_id, e.kind FROM ledger_entries e LEFT JOIN holds h ON h.request_id = e.request_id
     WHERE e.kind IN ('hold', 'capture', 'release')${byEntryKey.sql} AND h.request_id IS NULL ORDER BY e.request_id`,
      params: byEntryKey.params,
    },
    // 6. No hold outlives its expiry plus a sweep interval.
    stale: {
      sql: `SELECT h.request_id, h.key_id, h.expires_at FROM holds h WHERE h.status = 'active' AND h.expires_at < ?${byHoldKey.sql} ORDER BY h.expires_at`,
      params: [scope.staleBefore, ...byHoldKey.params],
    },
  };
}

/** The violations the rows of auditQueries show. */
export function violationsFrom(rows: AuditRows): LedgerViolation[] {
  const out: LedgerViolation[] = [];
  for (const row of rows.figures) {
    for (const field of ['held', 'spent'] as const) {
      const cached = n(row[field]);
      const derived = n(row[`d_${field}`]);
      if (cached !== derived) {
        out.push({ check: 'cached_balance', keyId: str(row.key_id), requestId: null, detail: `cached ${field} ${cached} != ${derived} derived from the ledger entries (nano-dollars)` });
      }
    }
  }
  for (const row of rows.accountFigures) {
    for (const field of ['balance', 'held', 'spent'] as const) {
      const cached = n(row[field]);
      const derived = n(row[`d_${field}`]);
      if (cached !== derived) {
        out.push({
          check: 'account_cached_balance',
          keyId: null,
          accountId: str(row.account_id),
          requestId: null,
          detail: `cached ${field} ${cached} != ${derived} derived from its ledger entries (nano-dollars)`,
        });
      }
    }
  }
  for (const row of rows.accountSums) {
    for (const field of ['held', 'spent'] as const) {
      if (n(row[field]) !== n(row[`keys_${field}`])) {
        out.push({
          check: 'account_vs_keys',
          keyId: null,
          accountId: str(row.account_id),
          requestId: null,
          detail: `${field} ${n(row[field])} != ${n(row[`keys_${field}`])}, the sum of its keys' ${field}`,
        });
      }
    }
  }
  for (const row of rows.held) {
    if (n(row.held) !== n(row.active)) {
      out.push({ check: 'held_vs_active_holds', keyId: str(row.key_id), requestId: null, detail: `held ${n(row.held)} != ${n(row.active)}, the sum of the key's active holds` });
    }
  }
  // An active hold is still fully held and uncaptured; a captured one has one capture and nothing left held;
  // a released or expired one has no capture and nothing left held. Each admission (hold entry) of a closed
  // hold is matched by one release.
  for (const row of rows.holds) {
    const status = str(row.status);
    const open = n(row.open_amount);
    const captures = n(row.captures);
    const expectedOpen = status === 'active' ? n(row.amount) : 0;
    const expectedCaptures = status === 'captured' ? 1 : 0;
    if (open === expectedOpen && captures === expectedCaptures) continue;
    out.push({
      check: 'hold_ends',
      keyId: str(row.key_id),
      requestId: str(row.request_id),
      detail: `hold (${status}) does not end exactly once: ${captures} capture(s) and ${n(row.releases)} release(s) for ${n(row.hold_entries)} hold entr(ies); the entries leave ${open} held, expected ${expectedOpen}`,
    });
  }
  for (const row of rows.captures) {
    const detail =
      row.usage_request === null || row.usage_request === undefined
        ? `capture of ${n(row.amount)} has no usage row`
        : `capture of ${n(row.amount)} but its usage row records cost ${n(row.cost)}`;
    out.push({ check: 'capture_without_usage', keyId: str(row.key_id), requestId: str(row.request_id), detail });
  }
  for (const row of rows.orphans) {
    out.push({ check: 'entry_without_hold', keyId: str(row.key_id), requestId: str(row.request_id), detail: `a ${str(row.kind)} entry with no hold` });
  }
  for (const row of rows.stale) {
    out.push({ check: 'expired_hold_active', keyId: str(row.key_id), requestId: str(row.request_id), detail: `active, but it expired at ${new Date(n(row.expires_at)).toISOString()}` });
  }
  return out;
}
