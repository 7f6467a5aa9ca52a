// The ledger's rules on SQLite: one function per operation, each run by SqliteLedgerStore as one
// transaction. PostgreSQL states the same rules in PL/pgSQL (tollgate_ledger_batch, migrations/); the
// table of cases in test/storage/ledger-rules.test.ts is their one specification, run on both.
import type {
  Admission,
  GrowOutcome,
  HoldGrowth,
  HoldPlacement,
  HoldRenewal,
  ReleaseOutcome,
  RenewOutcome,
  Settlement,
  SettleResult,
  UsageRecord,
} from '../types.js';
import { NO_BUDGET, refusalOf, roomOf, usageValues } from '../rows.js';
import type { BudgetWindow, Refusal } from '../types.js';
import type { LedgerStatements } from './ledger-statements.js';

interface AdmissionFacts {
  readonly keyId: string;
  readonly amount: number;
  readonly now: number;
  readonly budget: BudgetWindow;
  readonly accountBudget?: BudgetWindow;
}

function refusalNow(s: LedgerStatements, a: AdmissionFacts): Refusal {
  const key = s.keyState.get(a.keyId);
  return refusalOf(key, key && s.accountState.get(key.account_id), a.amount, a.now, a.budget, a.accountBudget);
}

/**
 * The one admission (docs/adr/0047-accounts.md): the key's caps, then its account's money and budget, as
 * one step. Returns the account, or a refusal. A refusal by the account undoes the key's half here (its
 * held; a budget period the key's row rolled over to stays rolled, as the next admission would roll it, and
 * reads the same), so a refused admission returns without a savepoint (write-batcher.ts).
 */
function admit(s: LedgerStatements, a: AdmissionFacts): { accountId: string } | Refusal {
  const key = s.admitKey.get({ amount: a.amount, keyId: a.keyId, now: a.now, periodStart: a.budget.periodStart, budget: a.budget.limit });
  if (!key) return refusalNow(s, a);
  const accountId = key.account_id;
  const accountBudget = a.accountBudget ?? NO_BUDGET;
  const account = { amount: a.amount, accountId, periodStart: accountBudget.periodStart, budget: accountBudget.limit };
  if (s.admitAccount.run(account).changes !== 1) {
    // The refusal is read as the rows were before the key's half.
    s.unholdKey.run(a.amount, a.keyId);
    return refusalNow(s, a);
  }
  return { accountId };
}

/** Admission, then the hold and its 'hold' entry; a refusal says why from the key's and account's rows. */
export function placeHold(s: LedgerStatements, hold: HoldPlacement): Admission {
  const admitted = admit(s, hold);
  if ('admitted' in admitted) return admitted;
  s.insertHold.run(hold);
  s.entry.run(admitted.accountId, hold.keyId, hold.requestId, 'hold', hold.amount, hold.now, 0);
  return { admitted: true };
}

/** A capture's money on the key and its account; returns the account. */
function charge(s: LedgerStatements, keyId: string, cost: number, unheld: number, settlement: Settlement): string {
  const { account_id } = s.chargeKey.get({ cost, unheld, periodStart: settlement.budget.periodStart, keyId })!;
  s.chargeAccount.run({ cost, unheld, periodStart: (settlement.accountBudget ?? NO_BUDGET).periodStart, accountId: account_id });
  return account_id;
}

/** Captures an active hold at its cost; an expired one ("late") through admission, else capped. */
export function settle(s: LedgerStatements, settlement: Settlement): SettleResult {
  const { requestId, cost, now } = settlement;
  const active = s.closeHold.get('captured', now, requestId, 'active');
  if (active) {
    const accountId = charge(s, active.key_id, cost, active.amount, settlement);
    s.entry.run(accountId, active.key_id, requestId, 'release', active.amount, now, active.seq);
    s.entry.run(accountId, active.key_id, requestId, 'capture', cost, now, 0);
    s.insertUsage.run(...usageValues(settlement.usage));
    return { outcome: 'captured', charged: cost };
  }
  // Late: a sweeper released the expired hold and its money may be spent. The work was done, so the
  // cost is charged if the key and its account can cover again what the hold covered (the rest is the
  // usual overage); otherwise only what every cap leaves, never taking the balance below zero.
  const late = s.closeHold.get('captured', now, requestId, 'expired');
  if (late) {
    const key = s.keyState.get(late.key_id)!;
    const room = roomOf(key, s.accountState.get(key.account_id)!, settlement.budget, settlement.accountBudget);
    const covered = Math.min(cost, late.amount);
    const admitted = room >= covered;
    const charged = admitted ? cost : Math.max(0, Math.min(cost, room));
    const accountId = charge(s, late.key_id, charged, 0, settlement);
    s.entry.run(accountId, late.key_id, requestId, 'capture', charged, now, 0);
    s.insertUsage.run(...usageValues(charged === cost ? settlement.usage : { ...settlement.usage, cost: charged }));
    return { outcome: admitted ? 'late' : 'late-capped', charged };
  }
  return { outcome: s.holdExists.get(requestId) ? 'duplicate' : 'missing', charged: 0 };
}

/** Extends an active hold, or re-admits one a sweeper expired while its request still ran. */
export function renewHold(s: LedgerStatements, renewal: HoldRenewal): RenewOutcome {
  const hold = s.holdState.get(renewal.requestId);
  if (!hold) return { outcome: 'missing' };
  if (hold.status === 'active') {
    s.extend.run(renewal.expiresAt, renewal.requestId);
    return { outcome: 'extended' };
  }
  if (hold.status !== 'expired') return { outcome: 'closed' };
  // Expired while its request still ran: admitted again exactly as a new hold would be.
  const admitted = admit(s, { ...renewal, keyId: hold.key_id, amount: hold.amount });
  if ('admitted' in admitted) return { outcome: 'refused', refusal: admitted };
  s.reactivate.run(hold.seq + 1, renewal.expiresAt, renewal.requestId);
  s.entry.run(admitted.accountId, hold.key_id, renewal.requestId, 'hold', hold.amount, renewal.now, hold.seq + 1);
  return { outcome: 'readmitted' };
}

/** Grows an active hold by a step, through the same admission as a new hold. */
export function growHold(s: LedgerStatements, growth: HoldGrowth): GrowOutcome {
  const hold = s.holdState.get(growth.requestId);
  if (!hold) return { outcome: 'missing' };
  if (hold.status !== 'active') return { outcome: hold.status === 'expired' ? 'expired' : 'closed' };
  const admitted = admit(s, { ...growth, keyId: hold.key_id });
  if ('admitted' in admitted) return { outcome: 'refused', refusal: admitted };
  s.grow.run(growth.amount, growth.requestId);
  s.entry.run(admitted.accountId, hold.key_id, growth.requestId, 'hold', growth.amount, growth.now, hold.seq + 1);
  return { outcome: 'grown' };
}

/** A hold's money leaves the key's and the account's held, with its 'release' entry. */
function unhold(s: LedgerStatements, keyId: string, requestId: string, amount: number, now: number, seq: number): void {
  const { account_id } = s.unholdKey.get(amount, keyId)!;
  s.unholdAccount.run(amount, account_id);
  s.entry.run(account_id, keyId, requestId, 'release', amount, now, seq);
}

/** Releases an active hold without a charge; the usage row, if given, is written unless the hold is missing or closed. */
export function release(s: LedgerStatements, requestId: string, usage: UsageRecord | undefined, now: number): ReleaseOutcome {
  const active = s.closeHold.get('released', now, requestId, 'active');
  let outcome: ReleaseOutcome;
  if (active) {
    unhold(s, active.key_id, requestId, active.amount, now, active.seq);
    outcome = 'released';
  } else {
    const existing = s.holdExists.get(requestId);
    if (!existing) return 'missing';
    if (existing.status !== 'expired') return 'duplicate';
    outcome = 'expired';
  }
  if (usage) s.insertUsage.run(...usageValues(usage));
  return outcome;
}

/** The sweeper: marks up to `limit` active holds whose expiry has passed expired, releasing each. */
export function expireHolds(s: LedgerStatements, now: number, limit: number): number {
  let released = 0;
  for (const { request_id } of s.expired.all(now, limit)) {
    const hold = s.closeHold.get('expired', now, request_id, 'active');
    if (!hold) continue;
    unhold(s, hold.key_id, request_id, hold.amount, now, hold.seq);
    released += 1;
  }
  return released;
}
