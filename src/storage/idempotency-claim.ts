// What a claim on an Idempotency-Key decides, given the record already there (both dialects read the
// row under their write lock, then apply this): the one place the rules live.
import type { ClaimOutcome, IdempotencyClaim } from './types.js';

export interface IdempotencyRow {
  request_hash: string;
  state: 'running' | 'done';
  lease_until: number;
  status: number | null;
  content_type: string | null;
  body: string | null;
  expires_at: number;
}

export const IDEMPOTENCY_COLUMNS = 'request_hash, state, lease_until, status, content_type, body, expires_at';

/** 'write' when the caller should (re)write the row as a new running claim, else the outcome to return. */
export function decideClaim(row: IdempotencyRow | undefined, claim: IdempotencyClaim): 'write' | ClaimOutcome {
  // Absent, or past its keeping time: a new request.
  if (!row || row.expires_at <= claim.now) return 'write';
  if (row.request_hash !== claim.requestHash) return { outcome: 'mismatch' };
  if (row.state === 'done') {
    const answer = row.body === null ? null : { status: row.status!, contentType: row.content_type!, body: row.body };
    return { outcome: 'done', answer };
  }
  // Running: still in flight, or abandoned by a process that died (its lease lapsed).
  return row.lease_until > claim.now ? { outcome: 'running' } : 'write';
}
