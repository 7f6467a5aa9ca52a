// Money an operator moves on a key — on its account, which owns the money (docs/adr/0047-accounts.md) —
// and the key's ledger: top-ups (`topup` entries) and corrections (`adjust` entries, either sign), each
// one ledger entry that moves the balance with it, in one transaction. That transaction also refuses a revoked key and a balance past the ledger's maximum, so a
// revoke or another credit racing this one cannot slip between the check and the write (ADR 0032). A
// caller that may retry (the admin API with an Idempotency-Key) passes a request id of its own: a credit
// whose entry already exists is not applied twice, even after a crash between the commit and the
// recorded answer — and is answered as applied, even if the key was revoked since.
import { randomUUID } from 'node:crypto';
import { nanoToUsd } from '../billing/money.js';
import type { Credit, KeyRecord, LedgerEntry, Store } from '../storage/types.js';
import { creditFailure } from './accounts.js';
import { usdAmount } from './amount-input.js';
import { noteOf, type CreditOptions } from './credit-input.js';
import type { LedgerEntryJson } from './json-types.js';
import { requireKey } from './keys.js';
import { decodeCursor, listPage, pageSize, type ListPage } from './page.js';

async function creditKey(store: Store, credit: Credit, what: string): Promise<KeyRecord> {
  const failure = await creditFailure(store, await store.accounts.credit(credit), credit, what);
  if (failure) throw failure;
  return requireKey(store, credit.keyId!);
}

/** Adds credit: a positive USD amount (a number or a decimal string), with an optional note. */
export async function topUpKey(store: Store, id: string, amount: unknown, note?: unknown, options: CreditOptions = {}): Promise<KeyRecord> {
  const nano = usdAmount('amount', amount, { allowZero: false });
  const credit = { keyId: id, kind: 'topup', amount: nano, note: noteOf('note', note, false) } as const;
  return creditKey(store, { ...credit, requestId: options.requestId ?? `topup_${randomUUID()}`, now: options.now ?? Date.now() }, 'a top-up');
}

/**
 * A correction of either sign, with its reason; it never takes the available balance below zero, nor
 * the balance past the maximum.
 */
export async function adjustKey(store: Store, id: string, amount: unknown, reason: unknown, options: CreditOptions = {}): Promise<KeyRecord> {
  const nano = usdAmount('amount', amount, { allowZero: false, allowNegative: true });
  const credit = { keyId: id, kind: 'adjust', amount: nano, note: noteOf('reason', reason, true) } as const;
  return creditKey(store, { ...credit, requestId: options.requestId ?? `adjust_${randomUUID()}`, now: options.now ?? Date.now() }, 'an adjustment');
}

export function ledgerEntryJson(entry: LedgerEntry): LedgerEntryJson {
  return {
    id: entry.id,
    object: 'ledger_entry',
    account_id: entry.accountId,
    key_id: entry.keyId,
    kind: entry.kind,
    amount: nanoToUsd(entry.amount),
    request_id: entry.requestId,
    note: entry.note,
    created_at: new Date(entry.createdAt).toISOString(),
  };
}

const isEntryPosition = (p: unknown): p is number => Number.isSafeInteger(p) && (p as number) > 0;

/** A key's ledger entries, newest first. */
export async function listLedger(store: Store, id: string, query: { limit?: unknown; after?: unknown } = {}): Promise<ListPage<LedgerEntryJson>> {
  const limit = pageSize(query.limit);
  const beforeId = query.after === undefined ? undefined : decodeCursor('ledger', query.after, isEntryPosition);
  await requireKey(store, id);
  const rows = await store.keys.entries({ keyId: id, ...(beforeId !== undefined ? { beforeId } : {}), limit: limit + 1 });
  return listPage('ledger', rows, limit, ledgerEntryJson, (e) => e.id);
}
