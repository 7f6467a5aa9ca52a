// The operator's key actions through /admin/v1/keys (§9). Every POST carries an Idempotency-Key made once
// per user action, so a double submit or a retried request never tops up or rotates twice.
import { getAll, getJson, withQuery } from './api.js';
import type { IssuedKeyJson, KeyJson, LimitsJson, ListPage } from './types.js';

const KEYS = '/admin/v1/keys';

export function listKeys(token: string, params: { status?: string; name?: string; after?: string; limit?: number }): Promise<ListPage<KeyJson>> {
  return getJson(withQuery(KEYS, { limit: params.limit ?? 50, status: params.status, name: params.name, after: params.after }), { token });
}

/** Every key, following the cursors. */
export function listAllKeys(token: string): Promise<KeyJson[]> {
  return getAll<KeyJson>(KEYS, token, { limit: 100 });
}

/**
 * Limits to set. Money goes as the decimal text the operator typed: the server reads it exactly and
 * names what is wrong with it (a JSON number would round "8388608.000000001" before the server saw it).
 */
export type LimitsInput = Partial<Omit<LimitsJson, 'budget'>> & { budget?: string | null };

export interface KeyFields {
  name: string;
  allowed_models: string[] | '*';
  /** Only the limits to set (null: no limit of the key's own). */
  limits: LimitsInput;
  /** Absent: unchanged. */
  expires_at?: string | null;
  /** USD the key may ever spend, as typed; null: no cap; absent: unchanged (none, creating). */
  credit_limit?: string | null;
}

/**
 * The new key with its secret (`key`), shown once; null when the answer is a replay of one already sent.
 * With `account_id` the key draws on that account (no balance of its own); without, on a personal account
 * made for it with `balance`.
 */
export function createKey(token: string, fields: KeyFields & { balance?: string; account_id?: string }, idempotencyKey: string): Promise<IssuedKeyJson> {
  return getJson(KEYS, { token, body: fields, idempotencyKey });
}

export function updateKey(token: string, id: string, fields: KeyFields): Promise<KeyJson> {
  // Only what PATCH may change: the balance moves through top-ups and adjustments, never an edit.
  const { name, allowed_models, limits, expires_at, credit_limit } = fields;
  return getJson(`${KEYS}/${encodeURIComponent(id)}`, { token, method: 'PATCH', body: { name, allowed_models, limits, expires_at, credit_limit } });
}

export function topUpKey(token: string, id: string, amount: string, note: string | undefined, idempotencyKey: string): Promise<KeyJson> {
  return getJson(`${KEYS}/${encodeURIComponent(id)}/topup`, { token, body: note ? { amount, note } : { amount }, idempotencyKey });
}

export function revokeKey(token: string, id: string, idempotencyKey: string): Promise<KeyJson> {
  return getJson(`${KEYS}/${encodeURIComponent(id)}/revoke`, { token, body: {}, idempotencyKey });
}

/** The key with its new secret (`key`); null when the answer is a replay of one already sent. */
export function rotateKey(token: string, id: string, idempotencyKey: string): Promise<IssuedKeyJson> {
  return getJson(`${KEYS}/${encodeURIComponent(id)}/rotate`, { token, body: {}, idempotencyKey });
}
