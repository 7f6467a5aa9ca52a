// The Responses state on PostgreSQL (product.md §14): stored response and item ids per key, shared by
// every gateway on the database — a response made through one gateway can be continued through another.
import type { ResponseStateStore, StoredResponse, StoredResponseRef } from '../types.js';
import type { PostgresPool } from './connection.js';

interface RefRow {
  id: string;
  response_id: string;
  provider: string;
  input_tokens: number;
  output_tokens: number;
}

export class PostgresResponseStateStore implements ResponseStateStore {
  constructor(private readonly pool: PostgresPool) {}

  async record(response: StoredResponse): Promise<void> {
    // One statement for the response and all its items (each id once: an upsert may touch a row only once);
    // an id recorded again takes the new figures.
    const ids = [...new Set([response.responseId, ...response.itemIds])];
    await this.pool.query(
      `INSERT INTO response_ids (key_id, id, response_id, provider, input_tokens, output_tokens, expires_at)
       SELECT $1, id, $3, $4, $5, $6, $7 FROM unnest($2::text[]) AS id
       ON CONFLICT (key_id, id) DO UPDATE SET response_id = EXCLUDED.response_id, provider = EXCLUDED.provider,
         input_tokens = EXCLUDED.input_tokens, output_tokens = EXCLUDED.output_tokens, expires_at = EXCLUDED.expires_at`,
      [response.keyId, ids, response.responseId, response.provider, response.inputTokens, response.outputTokens, response.expiresAt],
    );
  }

  async find(keyId: string, ids: readonly string[], now: number): Promise<StoredResponseRef[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.pool.query<RefRow>(
      `SELECT id, response_id, provider, input_tokens, output_tokens FROM response_ids
       WHERE key_id = $1 AND id = ANY($2::text[]) AND expires_at > $3`,
      [keyId, ids, now],
    );
    return rows.map((row) => ({ id: row.id, responseId: row.response_id, provider: row.provider, inputTokens: Number(row.input_tokens), outputTokens: Number(row.output_tokens) }));
  }

  async expire(now: number, limit: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM response_ids WHERE (key_id, id) IN (
         SELECT key_id, id FROM response_ids WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [now, limit],
    );
    return rowCount ?? 0;
  }
}
