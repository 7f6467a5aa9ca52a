// Per-request usage rows on PostgreSQL.
import { usagePageSql, usageSummarySql, usageTotalsOf, type TotalsRow } from '../listing-sql.js';
import { usageRecordOf, type UsageRow } from '../rows.js';
import type { SequencedUsage, UsageFilter, UsageGrouping, UsagePageQuery, UsageQuery, UsageRecord, UsageStore, UsageTotals } from '../types.js';
import type { PostgresPool } from './connection.js';

export class PostgresUsageStore implements UsageStore {
  constructor(private readonly pool: PostgresPool) {}

  async list(query: UsageQuery): Promise<UsageRecord[]> {
    // The newest `limit` rows that match, returned oldest first.
    const { rows } = await this.pool.query<UsageRow>(
      `SELECT * FROM (
         SELECT * FROM usage_records
         WHERE ($1::text IS NULL OR key_id = $1) AND created_at >= $2
         ORDER BY created_at DESC, seq DESC LIMIT $3
       ) newest ORDER BY created_at ASC, seq ASC`,
      [query.keyId ?? null, query.since ?? 0, query.limit],
    );
    return rows.map(usageRecordOf);
  }

  async page(query: UsagePageQuery): Promise<SequencedUsage[]> {
    const { sql, values } = usagePageSql(query, 'seq', (i) => `$${i}`);
    const { rows } = await this.pool.query<UsageRow & { seq: number }>(sql, values);
    return rows.map((row) => ({ seq: row.seq, record: usageRecordOf(row) }));
  }

  async summarize(filter: UsageFilter, groupBy: UsageGrouping): Promise<UsageTotals[]> {
    const { sql, values } = usageSummarySql(filter, groupBy, (i) => `$${i}`);
    const { rows } = await this.pool.query<TotalsRow>(sql, values);
    return rows.map(usageTotalsOf);
  }
}
