// Redemption codes (docs/adr/0051-redemption-codes.md): the operator's list, create (the codes shown once)
// and revoke through /admin/v1/codes, and the holder's redeem through /v1/account/redeem — with an
// account token or a key, the same call. Money goes as the text typed (the server reads it exactly).
import { getJson, withQuery } from './api.js';
import type { CodeBatchJson, CodeJson, CodeRevocationJson, ListPage, RedemptionJson } from './types.js';

const CODES = '/admin/v1/codes';

export function listCodes(token: string, query: { status?: string; batch_id?: string; after?: string }): Promise<ListPage<CodeJson>> {
  return getJson(withQuery(CODES, { limit: 50, status: query.status, batch_id: query.batch_id, after: query.after }), { token });
}

/** A batch to create: absent fields are none (no expiry, any account, no note). */
export interface CodeFields {
  amount: string;
  count: string;
  expires_at?: string;
  account_id?: string;
  note?: string;
}

export function createCodes(token: string, fields: CodeFields, idempotencyKey: string): Promise<CodeBatchJson> {
  return getJson(CODES, { token, body: fields, idempotencyKey });
}

export function revokeCode(token: string, id: string, idempotencyKey: string): Promise<CodeRevocationJson> {
  return getJson(`${CODES}/${encodeURIComponent(id)}/revoke`, { token, body: {}, idempotencyKey });
}

export function revokeCodeBatch(token: string, batchId: string, idempotencyKey: string): Promise<CodeRevocationJson> {
  return getJson(`${CODES}/revoke`, { token, body: { batch_id: batchId }, idempotencyKey });
}

/** The holder's redeem: an account token or a key secret (its account is credited). */
export function redeemCode(token: string, code: string): Promise<RedemptionJson> {
  return getJson('/v1/account/redeem', { token, body: { code } });
}
