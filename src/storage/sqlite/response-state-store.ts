// The Responses state on SQLite (product.md §14): stored response and item ids per key. A record is written
// through the ledger's write batcher (one write of its group commit), so a busy gateway pays no commit
// of its own for it; reads are one indexed lookup of the ids a request names.
import type { ResponseStateStore, StoredResponse, StoredResponseRef } from '../types.js';
import type { SqliteDatabase } from './connection.js';
import type { WriteBatcher } from './write-batcher.js';

interface RefRow {
  id: string;
  response_id: string;
  provider: string;
  input_tokens: number;
  output_tokens: number;
}

export class SqliteResponseStateStore implements ResponseStateStore {
  private readonly recordWrite;
  private readonly statements;

  constructor(
    db: SqliteDatabase,
    private readonly batcher: WriteBatcher,
  ) {
    const insert = db.prepare<[string, string, string, string, number, number, number]>(
      `INSERT OR REPLACE INTO response_ids (key_id, id, response_id, provider, input_tokens, output_tokens, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.statements = {
      // The ids as one JSON array: one prepared statement whatever their number.
      find: db.prepare<[string, string, number], RefRow>(
        `SELECT id, response_id, provider, input_tokens, output_tokens FROM response_ids
         WHERE key_id = ? AND id IN (SELECT value FROM json_each(?)) AND expires_at > ?`,
      ),
      expire: db.prepare<[number, number]>(
        'DELETE FROM response_ids WHERE rowid IN (SELECT rowid FROM response_ids WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)',
      ),
    };
    this.recordWrite = (response: StoredResponse) => {
      for (const id of new Set([response.responseId, ...response.itemIds])) {
        insert.run(response.keyId, id, response.responseId, response.provider, response.inputTokens, response.outputTokens, response.expiresAt);
      }
    };
  }

  async record(response: StoredResponse): Promise<void> {
    await this.batcher.enqueue(() => this.recordWrite(response));
  }

  async find(keyId: string, ids: readonly string[], now: number): Promise<StoredResponseRef[]> {
    if (ids.length === 0) return [];
    return this.statements.find.all(keyId, JSON.stringify(ids), now).map(refOf);
  }

  async expire(now: number, limit: number): Promise<number> {
    return this.batcher.enqueue(() => this.statements.expire.run(now, limit).changes);
  }
}

function refOf(row: RefRow): StoredResponseRef {
  return { id: row.id, responseId: row.response_id, provider: row.provider, inputTokens: Number(row.input_tokens), outputTokens: Number(row.output_tokens) };
}
