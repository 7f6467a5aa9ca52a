// Holds, captures and releases on SQLite. Each method is atomic (a savepoint inside the write batcher's
// IMMEDIATE transaction, which takes the write lock up front so a concurrent CLI write waits instead
// of failing mid-way). The cached balance/held columns on api_keys move only together with an
// append-only ledger entry.
import type { Nano } from '../../billing/money.js';
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
  SettleResult,
  UsageRecord,
  LedgerViolation,
} from '../types.js';
import { auditQueries, violationsFrom, type AuditRows, type AuditScope } from '../ledger-audit.js';
import { budgetUsedOf, KEY_ADMISSION_COLUMNS, refusalOf, SHARED_SQL, USAGE_COLUMNS, usageValues, type KeyAdmissionRow } from '../rows.js';
import type { SqliteDatabase } from './connection.js';
import type { WriteBatcher } from './write-batcher.js';

type EntryKind = 'hold' | 'capture' | 'release';

interface HoldRow {
  key_id: string;
  amount: number;
  seq: number;
}

export class SqliteLedgerStore implements LedgerStore {
  private readonly statements;
  private readonly placeHoldTx;
  private readonly settleTx;
  private readonly renewTx;
  private readonly growTx;
  private readonly releaseTx;
  private readonly expireTx;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly batcher: WriteBatcher,
  ) {
    const s = {
      // Admission: the one conditional UPDATE (the same SQL as on PostgreSQL).
      admit: db.prepare<{ amount: number; keyId: string; now: number; periodStart: number; budget: number | null }>(
        SHARED_SQL.admit('@amount', '@keyId', '@now', '@periodStart', '@budget'),
      ),
      keyState: db.prepare<[string], KeyAdmissionRow>(`SELECT ${KEY_ADMISSION_COLUMNS} FROM api_keys WHERE id = ?`),
      insertHold: db.prepare(
        `INSERT INTO holds (request_id, key_id, amount, status, expires_at, created_at)
         VALUES (@requestId, @keyId, @amount, 'active', @expiresAt, @now)`,
      ),
      entry: db.prepare<[string, string, EntryKind, number, number, number]>(
        'INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at, seq) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      closeHold: db.prepare<[string, number, string, string], HoldRow>(
        'UPDATE holds SET status = ?, settled_at = ? WHERE request_id = ? AND status = ? RETURNING key_id, amount, seq',
      ),
      holdState: db.prepare<[string], HoldRow & { status: string }>('SELECT key_id, amount, seq, status FROM holds WHERE request_id = ?'),
      holdExists: db.prepare<[string], { status: string }>('SELECT status FROM holds WHERE request_id = ?'),
      charge: db.prepare<{ cost: number; unheld: number; periodStart: number; keyId: string }>(
        SHARED_SQL.charge('@cost', '@unheld', '@periodStart', '@keyId'),
      ),
      unhold: db.prepare<[number, string]>('UPDATE api_keys SET held = held - ? WHERE id = ?'),
      insertUsage: db.prepare(SHARED_SQL.insertUsage(USAGE_COLUMNS.map(() => '?'))),
      extend: db.prepare<[number, string]>("UPDATE holds SET expires_at = ? WHERE request_id = ? AND status = 'active'"),
      grow: db.prepare<[number, string]>("UPDATE holds SET amount = amount + ?, seq = seq + 1 WHERE request_id = ? AND status = 'active'"),
      reactivate: db.prepare<[number, number, string]>(
        "UPDATE holds SET status = 'active', seq = ?, expires_at = ?, settled_at = NULL WHERE request_id = ? AND status = 'expired'",
      ),
      expired: db.prepare<[number, number], { request_id: string }>(
        "SELECT request_id FROM holds WHERE status = 'active' AND expires_at <= ? ORDER BY expires_at LIMIT ?",
      ),
      audit: db.prepare<[string], { balance: number; held: number; spent: number }>(SHARED_SQL.derivedFigures('?')),
      activeCount: db.prepare<[string], { n: number }>(
        "SELECT COUNT(*) AS n FROM holds WHERE key_id = ? AND status = 'active'",
      ),
    };
    this.statements = s;

    this.placeHoldTx = db.transaction((hold: HoldPlacement): Admission => {
      const admission = { amount: hold.amount, keyId: hold.keyId, now: hold.now, periodStart: hold.budget.periodStart, budget: hold.budget.limit };
      if (s.admit.run(admission).changes !== 1) return refusalOf(s.keyState.get(hold.keyId), hold.amount, hold.now, hold.budget);
      s.insertHold.run(hold);
      s.entry.run(hold.keyId, hold.requestId, 'hold', hold.amount, hold.now, 0);
      return { admitted: true };
    });

    this.settleTx = db.transaction((settlement: Settlement): SettleResult => {
      const { requestId, cost, now } = settlement;
      const periodStart = settlement.budget.periodStart;
      const active = s.closeHold.get('captured', now, requestId, 'active');
      if (active) {
        s.charge.run({ cost, unheld: active.amount, periodStart, keyId: active.key_id });
        s.entry.run(active.key_id, requestId, 'release', active.amount, now, active.seq);
        s.entry.run(active.key_id, requestId, 'capture', cost, now, 0);
        s.insertUsage.run(...usageValues(settlement.usage));
        return { outcome: 'captured', charged: cost };
      }
      // Late: a sweeper released the expired hold and its money may be spent. The work was done, so the
      // cost is charged if the key can cover again what the hold covered (the rest is the usual
      // overage); otherwise only what is available, never taking it below zero.
      const late = s.closeHold.get('captured', now, requestId, 'expired');
      if (late) {
        const key = s.keyState.get(late.key_id)!;
        const available = key.balance - key.held;
        const budgetRoom = settlement.budget.limit === null ? Infinity : settlement.budget.limit - budgetUsedOf(key, periodStart);
        const covered = Math.min(cost, late.amount);
        const admitted = available >= covered && budgetRoom >= covered;
        const charged = admitted ? cost : Math.max(0, Math.min(cost, available, budgetRoom));
        s.charge.run({ cost: charged, unheld: 0, periodStart, keyId: late.key_id });
        s.entry.run(late.key_id, requestId, 'capture', charged, now, 0);
        s.insertUsage.run(...usageValues(charged === cost ? settlement.usage : { ...settlement.usage, cost: charged }));
        return { outcome: admitted ? 'late' : 'late-capped', charged };
      }
      return { outcome: s.holdExists.get(requestId) ? 'duplicate' : 'missing', charged: 0 };
    });

    this.renewTx = db.transaction((renewal: HoldRenewal): RenewOutcome => {
      const hold = s.holdState.get(renewal.requestId);
      if (!hold) return { outcome: 'missing' };
      if (hold.status === 'active') {
        s.extend.run(renewal.expiresAt, renewal.requestId);
        return { outcome: 'extended' };
      }
      if (hold.status !== 'expired') return { outcome: 'closed' };
      // Expired while its request still ran: admitted again exactly as a new hold would be.
      const { budget, now } = renewal;
      if (s.admit.run({ amount: hold.amount, keyId: hold.key_id, now, periodStart: budget.periodStart, budget: budget.limit }).changes !== 1) {
        return { outcome: 'refused', refusal: refusalOf(s.keyState.get(hold.key_id), hold.amount, now, budget) };
      }
      s.reactivate.run(hold.seq + 1, renewal.expiresAt, renewal.requestId);
      s.entry.run(hold.key_id, renewal.requestId, 'hold', hold.amount, renewal.now, hold.seq + 1);
      return { outcome: 'readmitted' };
    });

    this.growTx = db.transaction((growth: HoldGrowth): GrowOutcome => {
      const hold = s.holdState.get(growth.requestId);
      if (!hold) return { outcome: 'missing' };
      if (hold.status !== 'active') return { outcome: hold.status === 'expired' ? 'expired' : 'closed' };
      const { amount, now, budget } = growth;
      if (s.admit.run({ amount, keyId: hold.key_id, now, periodStart: budget.periodStart, budget: budget.limit }).changes !== 1) {
        return { outcome: 'refused', refusal: refusalOf(s.keyState.get(hold.key_id), amount, now, budget) };
      }
      s.grow.run(amount, growth.requestId);
      s.entry.run(hold.key_id, growth.requestId, 'hold', amount, now, hold.seq + 1);
      return { outcome: 'grown' };
    });

    this.releaseTx = db.transaction((requestId: string, usage: UsageRecord | undefined, now: number): ReleaseOutcome => {
      const active = s.closeHold.get('released', now, requestId, 'active');
      let outcome: ReleaseOutcome;
      if (active) {
        s.unhold.run(active.amount, active.key_id);
        s.entry.run(active.key_id, requestId, 'release', active.amount, now, active.seq);
        outcome = 'released';
      } else {
        const existing = s.holdExists.get(requestId);
        if (!existing) return 'missing';
        if (existing.status !== 'expired') return 'duplicate';
        outcome = 'expired';
      }
      if (usage) s.insertUsage.run(...usageValues(usage));
      return outcome;
    });

    this.expireTx = db.transaction((now: number, limit: number): number => {
      let released = 0;
      for (const { request_id } of s.expired.all(now, limit)) {
        const hold = s.closeHold.get('expired', now, request_id, 'active');
        if (!hold) continue;
        s.unhold.run(hold.amount, hold.key_id);
        s.entry.run(hold.key_id, request_id, 'release', hold.amount, now, hold.seq);
        released += 1;
      }
      return released;
    });
  }

  placeHold(hold: HoldPlacement): Promise<Admission> {
    return this.batcher.enqueue(() => this.placeHoldTx(hold));
  }

  settle(settlement: Settlement): Promise<SettleResult> {
    return this.batcher.enqueue(() => this.settleTx(settlement));
  }

  release(requestId: string, usage: UsageRecord | undefined, now: number): Promise<ReleaseOutcome> {
    return this.batcher.enqueue(() => this.releaseTx(requestId, usage, now));
  }

  renewHold(renewal: HoldRenewal): Promise<RenewOutcome> {
    return this.batcher.enqueue(() => this.renewTx(renewal));
  }

  growHold(growth: HoldGrowth): Promise<GrowOutcome> {
    return this.batcher.enqueue(() => this.growTx(growth));
  }

  async expireHolds(now: number, limit: number): Promise<number> {
    return this.expireTx.immediate(now, limit);
  }

  async findViolations(scope: AuditScope): Promise<LedgerViolation[]> {
    const queries = auditQueries(scope);
    // better-sqlite3 is synchronous: every check reads inside one transaction (one snapshot).
    const rows = this.db
      .transaction(() => {
        const out: Record<string, Array<Record<string, unknown>>> = {};
        for (const [name, query] of Object.entries(queries)) out[name] = this.db.prepare(query.sql).all(...query.params) as Array<Record<string, unknown>>;
        return out as AuditRows;
      })
      .deferred();
    return violationsFrom(rows);
  }

  async audit(keyId: string): Promise<LedgerAudit> {
    return this.db
      .transaction(() => {
        const key = this.statements.keyState.get(keyId);
        const derived = this.statements.audit.get(keyId)!;
        const cached = this.db
          .prepare<[string], { balance: Nano; held: Nano; spent: Nano }>('SELECT balance, held, spent FROM api_keys WHERE id = ?')
          .get(keyId);
        return {
          cached: cached ?? { balance: 0, held: 0, spent: 0 },
          derived: key ? derived : { balance: 0, held: 0, spent: 0 },
          activeHolds: this.statements.activeCount.get(keyId)!.n,
        };
      })
      .deferred();
  }
}
