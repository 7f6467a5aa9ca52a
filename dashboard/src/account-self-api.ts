// What an account token's holder does through /v1/account (docs/adr/0047-accounts.md): read the account,
// its usage and its keys; create a key (its secret shown once), cap it, revoke it. Never above what the
// operator allowed: the server refuses what the account may not do, and the page shows its message.
import { getAll, getJson } from './api.js';
import type { AccountHolderJson, AccountKeyJson, IssuedAccountKeyJson, UsageTotalsJson } from './types.js';

const ACCOUNT = '/v1/account';
const key = (id: string) => `${ACCOUNT}/keys/${encodeURIComponent(id)}`;

/** The account, with its totals (keys, requests, cost). */
export function getOwnAccount(token: string): Promise<AccountHolderJson> {
  return getJson(ACCOUNT, { token });
}

export function listOwnKeys(token: string): Promise<AccountKeyJson[]> {
  return getAll<AccountKeyJson>(`${ACCOUNT}/keys`, token, { limit: 100 });
}

export function ownSummary(token: string, groupBy: 'key' | 'model' | 'day'): Promise<UsageTotalsJson[]> {
  return getAll<UsageTotalsJson>(`${ACCOUNT}/usage/summary`, token, { group_by: groupBy });
}

/** A key to create: money as typed (the server reads it exactly); absent fields: none. */
export interface OwnKeyFields {
  name: string;
  credit_limit?: string;
  budget?: string;
  budget_period?: 'day' | 'week' | 'month';
}

export function createOwnKey(token: string, fields: OwnKeyFields, idempotencyKey: string): Promise<IssuedAccountKeyJson> {
  return getJson(`${ACCOUNT}/keys`, { token, body: fields, idempotencyKey });
}

/** Sets (or, with null, clears) the key's credit limit. */
export function capOwnKey(token: string, id: string, creditLimit: string | null): Promise<AccountKeyJson> {
  return getJson(key(id), { token, method: 'PATCH', body: { credit_limit: creditLimit } });
}

export function revokeOwnKey(token: string, id: string, idempotencyKey: string): Promise<AccountKeyJson> {
  return getJson(`${key(id)}/revoke`, { token, body: {}, idempotencyKey });
}
