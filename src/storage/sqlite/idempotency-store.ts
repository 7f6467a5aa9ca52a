// Idempotency-Key records on SQLite: written through the ledger's write batcher (one write of its
// group commit, which holds the write lock), so two requests with one key cannot both claim it and a
// request that sends the header costs no commit of its own.
import { decideClaim, IDEMPOTENCY_COLUMNS, type IdempotencyRow } from '../idempotency-claim.js';
import type { ClaimOutcome, IdempotencyClaim, IdempotencyStore, StoredAnswer } from '../types.js';
import type { SqliteDatabase } from './connection.js';
import type { WriteBatcher } from './write-batcher.js';

export class SqliteIdempotencyStore implements IdempotencyStore {
  private readonly claimWrite;
  private readonly statements;

  constructor(
    db: SqliteDatabase,
    private readonly batcher: WriteBatcher,
  ) {
    const s = {
      read: db.prepare<[string, string], IdempotencyRow>(`SELECT ${IDEMPOTENCY_COLUMNS} FROM idempotency_keys WHERE scope = ? AND idempotency_key = ?`),
      write: db.prepare(
        `INSERT OR REPLACE INTO idempotency_keys (scope, idempotency_key, request_hash, state, lease_until, created_at, expires_at)
         VALUES (@scope, @key, @requestHash, 'running', @leaseUntil, @now, @expiresAt)`,
      ),
      complete: db.prepare<[number | null, string | null, string | null, string, string]>(
        "UPDATE idempotency_keys SET state = 'done', status = ?, content_type = ?, body = ? WHERE scope = ? AND idempotency_key = ? AND state = 'running'",
      ),
      renew: db.prepare<[number, string, string]>("UPDATE idempotency_keys SET lease_until = ? WHERE scope = ? AND idempotency_key = ? AND state = 'running'"),
      forget: db.prepare<[string, string]>("DELETE FROM idempotency_keys WHERE scope = ? AND idempotency_key = ? AND state = 'running'"),
      expire: db.prepare<[number, number]>(
        'DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)',
      ),
    };
    this.statements = s;
    this.claimWrite = (claim: IdempotencyClaim): ClaimOutcome => {
      const decision = decideClaim(s.read.get(claim.scope, claim.key), claim);
      if (decision !== 'write') return decision;
      s.write.run({ ...claim, leaseUntil: claim.now + claim.leaseMs, expiresAt: claim.now + claim.keepMs });
      return { outcome: 'claimed' };
    };
  }

  claim(claim: IdempotencyClaim): Promise<ClaimOutcome> {
    return this.batcher.enqueue(() => this.claimWrite(claim));
  }

  async complete(scope: string, key: string, answer: StoredAnswer | null): Promise<void> {
    await this.batcher.enqueue(() => this.statements.complete.run(answer?.status ?? null, answer?.contentType ?? null, answer?.body ?? null, scope, key));
  }

  async renew(scope: string, key: string, leaseUntil: number): Promise<void> {
    await this.batcher.enqueue(() => this.statements.renew.run(leaseUntil, scope, key));
  }

  async forget(scope: string, key: string): Promise<void> {
    await this.batcher.enqueue(() => this.statements.forget.run(scope, key));
  }

  async expire(now: number, limit: number): Promise<number> {
    return this.batcher.enqueue(() => this.statements.expire.run(now, limit).changes);
  }
}
