// Holds, captures and releases on SQLite. Each method is atomic: one write of the write batcher's
// IMMEDIATE transaction (which takes the write lock up front so a concurrent CLI write waits instead of
// failing mid-way), undone alone if it fails (write-batcher.ts). The cached money columns on accounts and api_keys move only together with an
// append-only ledger entry.
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
import type { SqliteDatabase } from './connection.js';
import { prepareLedgerStatements, type LedgerStatements } from './ledger-statements.js';
import * as rules from './ledger-rules.js';

import type { WriteBatcher } from './write-batcher.js';

export class SqliteLedgerStore implements LedgerStore {
  private readonly statements: LedgerStatements;
  private readonly expireTx;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly batcher: WriteBatcher,
  ) {
    const s = (this.statements = prepareLedgerStatements(db));
    // The sweeper runs outside the request path's batches: a transaction of its own.
    this.expireTx = db.transaction((now: number, limit: number) => rules.expireHolds(s, now, limit));
  }

  placeHold(hold: HoldPlacement): Promise<Admission> {
    return this.batcher.enqueue(() => rules.placeHold(this.statements, hold));
  }

  settle(settlement: Settlement): Promise<SettleResult> {
    return this.batcher.enqueue(() => rules.settle(this.statements, settlement));
  }

  release(requestId: string, usage: UsageRecord | undefined, now: number): Promise<ReleaseOutcome> {
    return this.batcher.enqueue(() => rules.release(this.statements, requestId, usage, now));
  }

  renewHold(renewal: HoldRenewal): Promise<RenewOutcome> {
    return this.batcher.enqueue(() => rules.renewHold(this.statements, renewal));
  }

  growHold(growth: HoldGrowth): Promise<GrowOutcome> {
    return this.batcher.enqueue(() => rules.growHold(this.statements, growth));
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
    const s = this.statements;
    return this.db
      .transaction(() => {
        const key = s.keyState.get(keyId);
        const cached = s.cachedFigures.get(keyId);
        const derived = key ? { ...s.derivedKeyFigures.get(keyId)!, balance: s.derivedAccountFigures.get(key.account_id)!.balance } : undefined;
        return {
          cached: cached ?? { balance: 0, held: 0, spent: 0 },
          derived: derived ?? { balance: 0, held: 0, spent: 0 },
          activeHolds: s.activeCount.get(keyId)!.n,
        };
      })
      .deferred();
  }
}
