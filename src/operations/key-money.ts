// Money an operator moves on a key, and the key's ledger: top-ups (`topup` entries) and corrections
// (`adjust` entries, either sign), each one ledger entry that moves the balance with it, in one
// transaction. That transaction also refuses a revoked key and a balance past the ledger's maximum, so a
// revoke or another credit racing this one cannot slip between the check and the write (ADR 0032). A
// caller that may retry (the admin API with an Idempotency-Key) passes a request id of its own: a credit
// whose entry already exists is not applied twice, even after a crash between the commit and the
// recorded answer — and is answered as applied, even if the key was revoked since.
import { randomUUID } from 'node:crypto';
import { formatUsd, MAX_NANO, MAX_USD, nanoToUsd, type Nano } from '../billing/money.js';
import { GatewayError } from '../errors.js';
import type { CreditOutcome, KeyRecord, LedgerEntry, Store } from '../storage/types.js';
import { usdAmount } from './amount-input.js';
import type { LedgerEntryJson } from './json-types.js';
import { requireKey } from './keys.js';
import { decodeCursor, listPage, pageSize, type ListPage } from './page.js';

export const MAX_NOTE_LENGTH = 500;

export interface CreditOptions {
  /** The ledger entry's request id; a random one by default. */
  readonly requestId?: string;
  readonly now?: number;
}

function noteOf(field: string, value: unknown, required: boolean): string | null {
  if (value === undefined || value === null) {
    if (!required) return null;
  } else if (typeof value === 'string' && value.trim() !== '' && value.length <= MAX_NOTE_LENGTH) {
    return value;
  }
  throw new GatewayError('invalid_request', {
    param: field,
    message: `Invalid '${field}': expected ${required ? 'a' : 'an optional'} non-empty string of at most ${MAX_NOTE_LENGTH} characters.`,
  });
}

async function applyCredit(store: Store, outcome: CreditOutcome, id: string, amount: Nano, what: string): Promise<KeyRecord> {
  if (outcome === 'missing') throw new GatewayError('key_not_found', { message: `No key with id ${id}.` });
  if (outcome === 'revoked') {
    throw new GatewayError('key_revoked', { message: `Key ${id} is revoked: its balance can no longer change, so ${what} was refused. Issue a new key instead.` });
  }
  if (outcome === 'overdraw') {
    const key = await requireKey(store, id);
    throw new GatewayError('invalid_request', {
      param: 'amount',
      message: `An adjustment of ${formatUsd(amount)} USD would take the available balance (${formatUsd(key.balance - key.held)} USD) below zero.`,
    });
  }
  if (outcome === 'over_maximum') {
    const key = await requireKey(store, id);
    throw new GatewayError('invalid_request', {
      param: 'amount',
      message: `${what[0]!.toUpperCase()}${what.slice(1)} of ${formatUsd(amount)} USD would take the balance (${formatUsd(key.balance)} USD) past ${MAX_USD} USD, the largest balance the ledger holds; at most ${formatUsd(Math.max(MAX_NANO - key.balance, 0))} USD more fits.`,
    });
  }
  return requireKey(store, id);
}

/** Adds credit: a positive USD amount (a number or a decimal string), with an optional note. */
export async function topUpKey(store: Store, id: string, amount: unknown, note?: unknown, options: CreditOptions = {}): Promise<KeyRecord> {
  const nano = usdAmount('amount', amount, { allowZero: false });
  const credit = { keyId: id, kind: 'topup', amount: nano, note: noteOf('note', note, false) } as const;
  const outcome = await store.accounts.credit({ ...credit, requestId: options.requestId ?? `topup_${randomUUID()}`, now: options.now ?? Date.now() });
  return applyCredit(store, outcome, id, nano, 'a top-up');
}

/**
 * A correction of either sign, with its reason; it never takes the available balance below zero, nor
 * the balance past the maximum.
 */
export async function adjustKey(store: Store, id: string, amount: unknown, reason: unknown, options: CreditOptions = {}): Promise<KeyRecord> {
  const nano = usdAmount('amount', amount, { allowZero: false, allowNegative: true });
  const credit = { keyId: id, kind: 'adjust', amount: nano, note: noteOf('reason', reason, true) } as const;
  const outcome = await store.accounts.credit({ ...credit, requestId: options.requestId ?? `adjust_${randomUUID()}`, now: options.now ?? Date.now() });
  return applyCredit(store, outcome, id, nano, 'an adjustment');
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
