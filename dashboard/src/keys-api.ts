// The operator's key actions through /admin/v1/keys (§9). Every POST carries an Idempotency-Key made once
// per user action, so a double submit or a retried request never tops up or rotates twice.
import { getJson, withQuery } from './api.js';
import type { KeyObject, Limits, ListPage } from './types.js';

const KEYS = '/admin/v1/keys';
/** Enough pages for any realistic gateway; the overview needs every key's hold. */
const MAX_PAGES = 50;

export function listKeys(token: string, params: { status?: string; name?: string; after?: string; limit?: number }): Promise<ListPage<KeyObject>> {
  return getJson(withQuery(KEYS, { limit: params.limit ?? 50, status: params.status, name: params.name, after: params.after }), { token });
}

/** Every key, following the cursors. */
export async function listAllKeys(token: string): Promise<KeyObject[]> {
  const keys: KeyObject[] = [];
  let after: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await listKeys(token, { after, limit: 200 });
    keys.push(...page.data);
    if (!page.has_more || !page.next_cursor) break;
    after = page.next_cursor;
  }
  return keys;
}

export interface KeyFields {
  name: string;
  allowed_models: string[] | '*';
  limits: Limits;
  expires_at: string | null;
}

export function createKey(token: string, fields: KeyFields & { balance: number }, idempotencyKey: string): Promise<KeyObject> {
  return getJson(KEYS, { token, body: fields, idempotencyKey });
}

export function updateKey(token: string, id: string, fields: KeyFields): Promise<KeyObject> {
  return getJson(`${KEYS}/${encodeURIComponent(id)}`, { token, method: 'PATCH', body: fields });
}

export function topUpKey(token: string, id: string, amount: number, note: string | undefined, idempotencyKey: string): Promise<KeyObject> {
  return getJson(`${KEYS}/${encodeURIComponent(id)}/topup`, { token, body: note ? { amount, note } : { amount }, idempotencyKey });
}

export function revokeKey(token: string, id: string, idempotencyKey: string): Promise<KeyObject> {
  return getJson(`${KEYS}/${encodeURIComponent(id)}/revoke`, { token, body: {}, idempotencyKey });
}

export function rotateKey(token: string, id: string, idempotencyKey: string): Promise<KeyObject> {
  return getJson(`${KEYS}/${encodeURIComponent(id)}/rotate`, { token, body: {}, idempotencyKey });
}
