// What an operator reads of one account besides the account object: its keys (key objects, a page at a
// time) and its ledger (every entry that moved its money, newest first) — the same for the CLI, the
// admin API and the dashboard (docs/adr/0047-accounts.md).
import type { Config } from '../config/types.js';
import type { Store } from '../storage/types.js';
import { requireAccount } from './accounts.js';
import type { KeyJson, LedgerEntryJson } from './json-types.js';
import { ledgerEntryJson } from './key-money.js';
import { listKeys, type KeyListInput } from './list-keys.js';
import { decodeCursor, listPage, pageSize, type ListPage } from './page.js';

const isEntryPosition = (p: unknown): p is number => Number.isSafeInteger(p) && (p as number) > 0;

/** The account's ledger entries (its own credits and every entry of its keys), newest first. */
export async function listAccountLedger(store: Store, id: string, query: { limit?: unknown; after?: unknown } = {}): Promise<ListPage<LedgerEntryJson>> {
  const limit = pageSize(query.limit);
  const beforeId = query.after === undefined ? undefined : decodeCursor('ledger', query.after, isEntryPosition);
  await requireAccount(store, id);
  const rows = await store.keys.entries({ accountId: id, ...(beforeId !== undefined ? { beforeId } : {}), limit: limit + 1 });
  return listPage('ledger', rows, limit, ledgerEntryJson, (e) => e.id);
}

/** The account's keys as key objects, in creation order, a page at a time (404 for an unknown account). */
export async function listAccountKeys(
  store: Store,
  config: Config,
  id: string,
  input: Omit<KeyListInput, 'account_id'> = {},
  now = Date.now(),
): Promise<ListPage<KeyJson>> {
  await requireAccount(store, id);
  return listKeys(store, config, { ...input, account_id: id }, now);
}
