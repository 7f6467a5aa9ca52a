// Per-request usage rows on PostgreSQL.
import { countUnauthenticatedSql, unauthenticatedSql, usagePageSql, usageSummarySql, usageTotalsOf, type TotalsRow } from '../listing-sql.js';
import { USAGE_COLUMNS, usageObjectOf, usageRecordOf, type UsageRow } from '../rows.js';
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
import type { PostgresPool } from './connection.js';

/** The usage columns with their types, as jsonb_to_recordset reads a batch of rows. */
const USAGE_COLUMN_TYPES: Record<(typeof USAGE_COLUMNS)[number], string> = {
  request_id: 'TEXT',
  created_at: 'BIGINT',
  key_id: 'TEXT',
  model: 'TEXT',
  provider: 'TEXT',
  upstream_model: 'TEXT',
  status: 'INTEGER',
  input_tokens: 'INTEGER',
  cached_input_tokens: 'INTEGER',
  output_tokens: 'INTEGER',
  reasoning_tokens: 'INTEGER',
  cost: 'BIGINT',
  usage_source: 'TEXT',
  attempts: 'TEXT',
  cache_write_tokens: 'INTEGER',
  endpoint: 'TEXT',
  error_code: 'TEXT',
  error_message: 'TEXT',
  duration_ms: 'INTEGER',
  first_token_ms: 'INTEGER',
  session_id: 'TEXT',
};

/** Many rows in one statement (one round trip whatever their number); a request id already recorded is skipped. */
const INSERT_OUTCOMES = `INSERT INTO usage_records (${USAGE_COLUMNS.join(', ')})
  SELECT ${USAGE_COLUMNS.join(', ')} FROM jsonb_to_recordset($1::jsonb)
    AS u (${USAGE_COLUMNS.map((column) => `${column} ${USAGE_COLUMN_TYPES[column]}`).join(', ')})
  ON CONFLICT (request_id) DO NOTHING`;

const COUNT_UNAUTHENTICATED = countUnauthenticatedSql((i) => `$${i}`);

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

  async recordOutcomes(records: readonly UsageRecord[]): Promise<void> {
    if (records.length === 0) return;
    await this.pool.query(INSERT_OUTCOMES, [JSON.stringify(records.map(usageObjectOf))]);
  }

  async countUnauthenticated(counts: readonly UnauthenticatedCount[]): Promise<void> {
    // One minute (rarely two) per flush: a statement each is no cost worth batching.
    for (const count of counts) await this.pool.query(COUNT_UNAUTHENTICATED, [count.minute, count.requests]);
  }

  async unauthenticated(range: { since?: number; until?: number }, groupBy: UnauthenticatedGrouping): Promise<UnauthenticatedCount[]> {
    const { sql, values } = unauthenticatedSql(range, groupBy, (i) => `$${i}`);
    const { rows } = await this.pool.query<{ minute: number | string; requests: number | string }>(sql, values);
    return rows.map((row) => ({ minute: Number(row.minute), requests: Number(row.requests) }));
  }
}
