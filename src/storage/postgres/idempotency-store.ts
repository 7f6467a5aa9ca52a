// Idempotency-Key records on PostgreSQL: a claim inserts the row (or locks the existing one) in one
// transaction, so two requests with one key — on one gateway or several — cannot both claim it.
import { decideClaim, IDEMPOTENCY_COLUMNS, type IdempotencyRow } from '../idempotency-claim.js';
import type { ClaimOutcome, IdempotencyClaim, IdempotencyStore, StoredAnswer } from '../types.js';
import { inTransaction, type PostgresPool } from './connection.js';

export class PostgresIdempotencyStore implements IdempotencyStore {
  constructor(private readonly pool: PostgresPool) {}

  claim(claim: IdempotencyClaim): Promise<ClaimOutcome> {
    return inTransaction(this.pool, async (client) => {
      const leaseUntil = claim.now + claim.leaseMs;
      const expiresAt = claim.now + claim.keepMs;
      // The common case, a new key, in one statement; a conflict leaves the row to read and decide on.
      const inserted = await client.query(
        `INSERT INTO idempotency_keys (scope, idempotency_key, request_hash, state, lease_until, created_at, expires_at)
         VALUES ($1, $2, $3, 'running', $4, $5, $6) ON CONFLICT (scope, idempotency_key) DO NOTHING`,
        [claim.scope, claim.key, claim.requestHash, leaseUntil, claim.now, expiresAt],
      );
      if (inserted.rowCount === 1) return { outcome: 'claimed' } as const;
      const { rows } = await client.query<IdempotencyRow>(
        `SELECT ${IDEMPOTENCY_COLUMNS} FROM idempotency_keys WHERE scope = $1 AND idempotency_key = $2 FOR UPDATE`,
        [claim.scope, claim.key],
      );
      const decision = decideClaim(rows[0], claim);
      if (decision !== 'write') return decision;
      await client.query(
        `UPDATE idempotency_keys SET request_hash = $3, state = 'running', lease_until = $4, status = NULL, content_type = NULL,
           body = NULL, created_at = $5, expires_at = $6 WHERE scope = $1 AND idempotency_key = $2`,
        [claim.scope, claim.key, claim.requestHash, leaseUntil, claim.now, expiresAt],
      );
      return { outcome: 'claimed' } as const;
    });
  }

  async complete(scope: string, key: string, answer: StoredAnswer | null): Promise<void> {
    await this.pool.query(
      "UPDATE idempotency_keys SET state = 'done', status = $1, content_type = $2, body = $3 WHERE scope = $4 AND idempotency_key = $5 AND state = 'running'",
      [answer?.status ?? null, answer?.contentType ?? null, answer?.body ?? null, scope, key],
    );
  }

  async renew(scope: string, key: string, leaseUntil: number): Promise<void> {
    await this.pool.query("UPDATE idempotency_keys SET lease_until = $1 WHERE scope = $2 AND idempotency_key = $3 AND state = 'running'", [leaseUntil, scope, key]);
  }

  async forget(scope: string, key: string): Promise<void> {
    await this.pool.query("DELETE FROM idempotency_keys WHERE scope = $1 AND idempotency_key = $2 AND state = 'running'", [scope, key]);
  }

  async expire(now: number, limit: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM idempotency_keys WHERE (scope, idempotency_key) IN (
         SELECT scope, idempotency_key FROM idempotency_keys WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [now, limit],
    );
    return rowCount ?? 0;
  }
}
