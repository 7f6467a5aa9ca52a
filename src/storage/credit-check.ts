// The one rule for a top-up or an adjustment, shared by both dialects: each store reads the account row
// (and the key's status, when the credit names a key) under the account's lock (SQLite's IMMEDIATE
// transaction, PostgreSQL's FOR UPDATE) and asks this before writing, so a revoke or another credit
// racing it cannot slip between the check and the write.
import { MAX_NANO } from '../billing/money.js';
import type { Credit, CreditOutcome } from './types.js';

export interface CreditAccountRow {
  balance: number;
  held: number;
}

/**
 * Why the credit must not be written (see CreditOutcome), or undefined: write it. `keyStatus`: the
 * status of the key the credit names (undefined when it names none, or no such key).
 */
export function creditRefusal(
  account: CreditAccountRow | undefined,
  keyStatus: string | undefined,
  entryExists: boolean,
  credit: Credit,
): Exclude<CreditOutcome, 'applied'> | undefined {
  if (!account || (credit.keyId !== undefined && keyStatus === undefined)) return 'missing';
  if (entryExists) return 'duplicate';
  if (credit.keyId !== undefined && keyStatus !== 'active') return 'revoked';
  if (credit.amount < 0 && account.balance - account.held + credit.amount < 0) return 'overdraw';
  // Both terms are at most about MAX_NANO, so the sum is exact up to 2^53 and far past MAX_NANO beyond it.
  if (credit.amount > 0 && account.balance + credit.amount > MAX_NANO) return 'over_maximum';
  return undefined;
}

/** The credit's own entry, if it was written before: credits are one entry each, at seq 0. */
export const CREDIT_ENTRY_EXISTS = (requestId: string, kind: string) =>
  `SELECT 1 AS found FROM ledger_entries WHERE request_id = ${requestId} AND kind = ${kind} AND seq = 0`;
