// What a key can still hold (docs/adr/0047-accounts.md): its account's available balance (balance − held),
// within what is left of the key's credit limit. The ledger's admission decides with the same rule
// (storage/rows.ts availableOf); this reads it from a key record for quotes and every face's figures.
import type { KeyRecord } from '../storage/types.js';
import type { Nano } from './money.js';

export function availableToKey(key: KeyRecord): Nano {
  const inAccount = key.account.balance - key.account.held;
  return key.creditLimit === null ? inAccount : Math.min(inAccount, key.creditLimit - key.spent - key.held);
}

/** What is left of the key's credit limit (null: it has none). */
export function creditLeft(key: KeyRecord): Nano | null {
  return key.creditLimit === null ? null : Math.max(key.creditLimit - key.spent - key.held, 0);
}
