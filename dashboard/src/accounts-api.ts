// The operator's account actions through /admin/v1/accounts (docs/adr/0047-accounts.md). Money goes as
// the decimal text the operator typed (the server reads it exactly); every POST carries an
// Idempotency-Key made once per user action, so a double submit never credits or rotates twice.
import { getAll, getJson, withQuery } from './api.js';
import type { AccountJson, IssuedAccountTokenJson, KeyJson, ListPage, UsageTotalsJson } from './types.js';

const ACCOUNTS = '/admin/v1/accounts';
const one = (id: string) => `${ACCOUNTS}/${encodeURIComponent(id)}`;

export interface AccountListQuery {
  include_personal?: boolean;
  status?: string;
  name?: string;
  after?: string;
  limit?: number;
}

export function listAccounts(token: string, query: AccountListQuery): Promise<ListPage<AccountJson>> {
  return getJson(
    withQuery(ACCOUNTS, {
      limit: query.limit ?? 50,
      include_personal: query.include_personal ? 'true' : undefined,
      status: query.status,
      name: query.name,
      after: query.after,
    }),
    { token },
  );
}

/** The shared (not personal) accounts' names by id, for the keys list to name each key's account. */
export async function listAccountNames(token: string): Promise<Record<string, string>> {
  const accounts = await getAll<AccountJson>(ACCOUNTS, token, { limit: 100 });
  return Object.fromEntries(accounts.map((a) => [a.id, a.name]));
}

/** An account to create: the opening balance and the budget as typed (empty: none). */
export interface AccountFields {
  name: string;
  balance?: string;
  budget?: string | null;
  budget_period?: 'day' | 'week' | 'month' | null;
}

export function createAccount(token: string, fields: AccountFields, idempotencyKey: string): Promise<AccountJson> {
  return getJson(ACCOUNTS, { token, body: fields, idempotencyKey });
}

export function getAccount(token: string, id: string): Promise<AccountJson> {
  return getJson(one(id), { token });
}

export function topUpAccount(token: string, id: string, amount: string, note: string | undefined, idempotencyKey: string): Promise<AccountJson> {
  return getJson(`${one(id)}/topup`, { token, body: note ? { amount, note } : { amount }, idempotencyKey });
}

export function adjustAccount(token: string, id: string, amount: string, reason: string, idempotencyKey: string): Promise<AccountJson> {
  return getJson(`${one(id)}/adjust`, { token, body: { amount, reason }, idempotencyKey });
}

export function setAccountStatus(token: string, id: string, verb: 'suspend' | 'resume', idempotencyKey: string): Promise<AccountJson> {
  return getJson(`${one(id)}/${verb}`, { token, body: {}, idempotencyKey });
}

/** A new self-service token (the old one stops working); `token` is shown once, null in a replay. */
export function issueAccountToken(token: string, id: string, idempotencyKey: string): Promise<IssuedAccountTokenJson> {
  return getJson(`${one(id)}/token`, { token, body: {}, idempotencyKey });
}

/** Every key of the account, following the cursors. */
export function listAccountKeys(token: string, id: string): Promise<KeyJson[]> {
  return getAll<KeyJson>(`${one(id)}/keys`, token, { limit: 100 });
}

/** The account's spend by key (or model, day, ...), all time. */
export function accountSummary(token: string, id: string, groupBy: string): Promise<UsageTotalsJson[]> {
  return getAll<UsageTotalsJson>('/admin/v1/usage/summary', token, { account_id: id, group_by: groupBy });
}
