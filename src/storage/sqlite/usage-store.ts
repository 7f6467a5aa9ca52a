// Per-request usage rows on SQLite.
import { countUnauthenticatedSql, unauthenticatedSql, usagePageSql, usageSummarySql, usageTotalsOf, type TotalsRow } from '../listing-sql.js';
import { SHARED_SQL, USAGE_COLUMNS, usageRecordOf, usageValues, type UsageRow } from '../rows.js';
import type {
  SequencedUsage,
  UnauthenticatedCount,
  UnauthenticatedGrouping,
  UsageFilter,
  UsageGrouping,
  UsagePageQuery,
  UsageQuery,
  UsageRecord,
  UsageStore,
  UsageTotals,
} from '../types.js';
import type { SqliteDatabase } from './connection.js';
import type { WriteBatcher } from './write-batcher.js';

export class SqliteUsageStore implements UsageStore {
  private readonly query;
  /** Writes of the batcher's group commit, each undone alone if it fails (write-batcher.ts). */
  private readonly insertOutcomes;
  private readonly addUnauthenticated;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly batcher: WriteBatcher,
  ) {
    // The newest `limit` rows that match, returned oldest first.
    this.query = db.prepare<{ keyId: string | null; since: number; limit: number }, UsageRow>(
      `SELECT * FROM (
         SELECT *, rowid AS seq FROM usage_records
         WHERE (@keyId IS NULL OR key_id = @keyId) AND created_at >= @since
         ORDER BY created_at DESC, rowid DESC LIMIT @limit
       ) ORDER BY created_at ASC, seq ASC`,
    );
    const insertUsage = db.prepare(SHARED_SQL.insertUsage(USAGE_COLUMNS.map(() => '?')));
    this.insertOutcomes = (records: readonly UsageRecord[]) => {
      for (const record of records) insertUsage.run(...usageValues(record));
    };
    const addCount = db.prepare(countUnauthenticatedSql(() => '?'));
    this.addUnauthenticated = (counts: readonly UnauthenticatedCount[]) => {
      for (const count of counts) addCount.run(count.minute, count.requests);
    };
  }

  async list(query: UsageQuery): Promise<UsageRecord[]> {
    return this.query.all({ keyId: query.keyId ?? null, since: query.since ?? 0, limit: query.limit }).map(usageRecordOf);
  }

  async page(query: UsagePageQuery): Promise<SequencedUsage[]> {
    const { sql, values } = usagePageSql(query, 'rowid', () => '?');
    return this.db
      .prepare<unknown[], UsageRow & { seq: number }>(sql)
      .all(...values)
      .map((row) => ({ seq: row.seq, record: usageRecordOf(row) }));
  }

  async summarize(filter: UsageFilter, groupBy: UsageGrouping): Promise<UsageTotals[]> {
    const { sql, values } = usageSummarySql(filter, groupBy, () => '?');
    return this.db.prepare<unknown[], TotalsRow>(sql).all(...values).map(usageTotalsOf);
  }

  // Through the request path's group commit: a burst of refusals is one transaction with the ledger's writes.
  recordOutcomes(records: readonly UsageRecord[]): Promise<void> {
    return this.batcher.enqueue(() => this.insertOutcomes(records));
  }

  countUnauthenticated(counts: readonly UnauthenticatedCount[]): Promise<void> {
    return this.batcher.enqueue(() => this.addUnauthenticated(counts));
  }

  async unauthenticated(range: { since?: number; until?: number }, groupBy: UnauthenticatedGrouping): Promise<UnauthenticatedCount[]> {
    const { sql, values } = unauthenticatedSql(range, groupBy, () => '?');
    return this.db
      .prepare<unknown[], { minute: number; requests: number }>(sql)
      .all(...values)
      .map((row) => ({ minute: Number(row.minute), requests: Number(row.requests) }));
  }
}
