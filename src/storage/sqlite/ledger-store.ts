// Holds, captures and releases on SQLite. Each method is atomic (a savepoint inside the write batcher's
// IMMEDIATE transaction, which takes the write lock up front so a concurrent CLI write waits instead
// of failing mid-way). The cached money columns on accounts and api_keys move only together with an
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
import type { Refusal } from '../types.js';

/** A rule's result, or the refusal its rolled-back admission carried (rules.AdmissionRefused). */
function refusedAs<T>(run: () => T, refused: (refusal: Refusal) => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof rules.AdmissionRefused) return refused(error.refusal);
    throw error;
  }
}
import type { WriteBatcher } from './write-batcher.js';

export class SqliteLedgerStore implements LedgerStore {
  private readonly statements: LedgerStatements;
  /** Each rule of ledger-rules.ts as one transaction (a savepoint inside the batcher's transaction). */
  private readonly tx;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly batcher: WriteBatcher,
  ) {
    const s = (this.statements = prepareLedgerStatements(db));
    this.tx = {
      placeHold: db.transaction((hold: HoldPlacement) => rules.placeHold(s, hold)),
      settle: db.transaction((settlement: Settlement) => rules.settle(s, settlement)),
      release: db.transaction((requestId: string, usage: UsageRecord | undefined, now: number) => rules.release(s, requestId, usage, now)),
      renewHold: db.transaction((renewal: HoldRenewal) => rules.renewHold(s, renewal)),
      growHold: db.transaction((growth: HoldGrowth) => rules.growHold(s, growth)),
      expireHolds: db.transaction((now: number, limit: number) => rules.expireHolds(s, now, limit)),
    };
  }

  placeHold(hold: HoldPlacement): Promise<Admission> {
    return this.batcher.enqueue(() => refusedAs(() => this.tx.placeHold(hold), (refusal) => refusal));
  }

  settle(settlement: Settlement): Promise<SettleResult> {
    return this.batcher.enqueue(() => this.tx.settle(settlement));
  }

  release(requestId: string, usage: UsageRecord | undefined, now: number): Promise<ReleaseOutcome> {
    return this.batcher.enqueue(() => this.tx.release(requestId, usage, now));
  }

  renewHold(renewal: HoldRenewal): Promise<RenewOutcome> {
    return this.batcher.enqueue(() => refusedAs(() => this.tx.renewHold(renewal), (refusal) => ({ outcome: 'refused', refusal })));
  }

  growHold(growth: HoldGrowth): Promise<GrowOutcome> {
    return this.batcher.enqueue(() => refusedAs(() => this.tx.growHold(growth), (refusal) => ({ outcome: 'refused', refusal })));
  }

  async expireHolds(now: number, limit: number): Promise<number> {
    return this.tx.expireHolds.immediate(now, limit);
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
