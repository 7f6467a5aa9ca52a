// Per-request usage rows on SQLite.
import { usagePageSql, usageSummarySql, usageTotalsOf, type TotalsRow } from '../listing-sql.js';
import { usageRecordOf, type UsageRow } from '../rows.js';
import type { SequencedUsage, UsageFilter, UsageGrouping, UsagePageQuery, UsageQuery, UsageRecord, UsageStore, UsageTotals } from '../types.js';
import type { SqliteDatabase } from './connection.js';

export class SqliteUsageStore implements UsageStore {
  private readonly query;

  constructor(private readonly db: SqliteDatabase) {
    // The newest `limit` rows that match, returned oldest first.
    this.query = db.prepare<{ keyId: string | null; since: number; limit: number }, UsageRow>(
      `SELECT * FROM (
         SELECT *, rowid AS seq FROM usage_records
         WHERE (@keyId IS NULL OR key_id = @keyId) AND created_at >= @since
         ORDER BY created_at DESC, rowid DESC LIMIT @limit
       ) ORDER BY created_at ASC, seq ASC`,
    );
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
}
