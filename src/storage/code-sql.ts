// Redemption codes' SQL and rows, shared by both dialects (given their placeholders, `?` or `$n`): the
// listing by status and batch in creation order, the conditional claim of a redeem, and what a refused
// claim was (docs/adr/0051-redemption-codes.md).
import type { Placeholder, Statement } from './listing-sql.js';
import type { CodePageQuery, CodeRecord, RedeemResult } from './types.js';

export interface CodeRow {
  id: string;
  code_prefix: string;
  amount: number;
  account_id: string | null;
  expires_at: number | null;
  batch_id: string;
  note: string | null;
  created_at: string;
  redeemed_at: number | null;
  redeemed_account_id: string | null;
  redeemed_key_id: string | null;
  revoked_at: number | null;
}

export const CODE_COLUMNS =
  'id, code_prefix, amount, account_id, expires_at, batch_id, note, created_at, redeemed_at, redeemed_account_id, redeemed_key_id, revoked_at';

export function codeRecordOf(row: CodeRow): CodeRecord {
  return {
    id: row.id,
    prefix: row.code_prefix,
    amount: Number(row.amount),
    accountId: row.account_id,
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    batchId: row.batch_id,
    note: row.note,
    createdAt: row.created_at,
    redeemedAt: row.redeemed_at === null ? null : Number(row.redeemed_at),
    redeemedAccountId: row.redeemed_account_id,
    redeemedKeyId: row.redeemed_key_id,
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}

export const INSERT_CODE_COLUMNS = 'id, code_hash, code_prefix, amount, account_id, expires_at, batch_id, note, created_at';

/** The status filter's condition at `now` (its placeholder's value is `now`, pushed by the caller). */
function statusCondition(status: CodePageQuery['status'], now: string): string | undefined {
  switch (status) {
    case 'unused':
      return `redeemed_at IS NULL AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ${now})`;
    case 'expired':
      return `redeemed_at IS NULL AND revoked_at IS NULL AND expires_at <= ${now}`;
    case 'redeemed':
      return 'redeemed_at IS NOT NULL';
    case 'revoked':
      return 'revoked_at IS NOT NULL';
    default:
      return undefined;
  }
}

export function codePageSql(query: CodePageQuery, placeholder: Placeholder): Statement {
  const values: unknown[] = [];
  const push = (value: unknown): string => {
    values.push(value);
    return placeholder(values.length);
  };
  const parts: string[] = [];
  if (query.status === 'unused' || query.status === 'expired') parts.push(statusCondition(query.status, push(query.now))!);
  else if (query.status) parts.push(statusCondition(query.status, '')!);
  if (query.batchId !== undefined) parts.push(`batch_id = ${push(query.batchId)}`);
  if (query.after) {
    const { createdAt, id } = query.after;
    parts.push(`(created_at > ${push(createdAt)} OR (created_at = ${push(createdAt)} AND id > ${push(id)}))`);
  }
  const where = parts.length === 0 ? '' : `WHERE ${parts.join(' AND ')}`;
  const limit = push(query.limit);
  return { sql: `SELECT ${CODE_COLUMNS} FROM redemption_codes ${where} ORDER BY created_at, id LIMIT ${limit}`, values };
}

/**
 * The claim: values (now, account, key, hash, now, account). It changes the row only if the code is
 * unredeemed, unrevoked, unexpired and its restriction (if any) names the account; under concurrency the
 * database decides which one claim sees the row so (SQLite's write lock; PostgreSQL's row lock, with the
 * WHERE re-checked on the row a concurrent claim committed).
 */
export function claimCodeSql(placeholder: Placeholder): string {
  const p = placeholder;
  return `UPDATE redemption_codes SET redeemed_at = ${p(1)}, redeemed_account_id = ${p(2)}, redeemed_key_id = ${p(3)}
    WHERE code_hash = ${p(4)} AND redeemed_at IS NULL AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ${p(5)})
      AND (account_id IS NULL OR account_id = ${p(6)})
    RETURNING ${CODE_COLUMNS}`;
}

export interface CodeStateRow {
  account_id: string | null;
  expires_at: number | null;
  redeemed_at: number | null;
  revoked_at: number | null;
}

/** Why a claim changed nothing, from the code's row as it is now (undefined: no such code). */
export function refusedClaim(row: CodeStateRow | undefined, accountId: string, now: number): Exclude<RedeemResult['outcome'], 'applied'> {
  if (!row) return 'unknown';
  if (row.redeemed_at !== null) return 'used';
  if (row.revoked_at !== null) return 'revoked';
  if (row.expires_at !== null && Number(row.expires_at) <= now) return 'expired';
  if (row.account_id !== null && row.account_id !== accountId) return 'wrong_account';
  // The row changed between the claim and this read (only possible for a rival claim's commit): used.
  return 'used';
}

/** The ledger request id of a code's top-up: one per code, so a second credit is a duplicate. */
export const redeemRequestId = (codeId: string): string => `redeem_${codeId}`;
