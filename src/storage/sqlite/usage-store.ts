// Per-request usage rows on SQLite.
import type { Attempt, UsageQuery, UsageRecord, UsageStore } from '../types.js';
import type { SqliteDatabase } from './connection.js';

interface UsageRow {
  request_id: string;
  created_at: number;
  key_id: string;
  model: string;
  provider: string;
  upstream_model: string;
  status: number;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cost: number;
  usage_source: 'upstream' | 'estimated';
  attempts: string;
}

export const INSERT_USAGE_SQL = `INSERT INTO usage_records (request_id, created_at, key_id, model, provider, upstream_model,
  status, input_tokens, cached_input_tokens, output_tokens, reasoning_tokens, cost, usage_source, attempts)
  VALUES (@requestId, @time, @keyId, @model, @provider, @upstreamModel, @status, @inputTokens, @cachedInputTokens,
  @outputTokens, @reasoningTokens, @cost, @usageSource, @attempts)
  ON CONFLICT (request_id) DO NOTHING`;

export function usageParams(usage: UsageRecord): Record<string, unknown> {
  return {
    ...usage,
    attempts: JSON.stringify(
      usage.attempts.map((a: Attempt) => ({ provider: a.provider, status: a.status, duration_ms: a.durationMs })),
    ),
  };
}

function toRecord(row: UsageRow): UsageRecord {
  const attempts = JSON.parse(row.attempts) as Array<{ provider: string; status: number; duration_ms: number }>;
  return {
    requestId: row.request_id,
    time: row.created_at,
    keyId: row.key_id,
    model: row.model,
    provider: row.provider,
    upstreamModel: row.upstream_model,
    status: row.status,
    inputTokens: row.input_tokens,
    cachedInputTokens: row.cached_input_tokens,
    outputTokens: row.output_tokens,
    reasoningTokens: row.reasoning_tokens,
    cost: row.cost,
    usageSource: row.usage_source,
    attempts: attempts.map((a) => ({ provider: a.provider, status: a.status, durationMs: a.duration_ms })),
  };
}

export class SqliteUsageStore implements UsageStore {
  private readonly query;

  constructor(db: SqliteDatabase) {
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
    return this.query.all({ keyId: query.keyId ?? null, since: query.since ?? 0, limit: query.limit }).map(toRecord);
  }
}
