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
import { budgetUsedOf, refusalOf, usageValues } from '../rows.js';
import type { LedgerStatements } from './ledger-statements.js';

/** Admission, then the hold and its 'hold' entry; a refusal says why from the key's row. */
export function placeHold(s: LedgerStatements, hold: HoldPlacement): Admission {
  const admission = { amount: hold.amount, keyId: hold.keyId, now: hold.now, periodStart: hold.budget.periodStart, budget: hold.budget.limit };
  if (s.admit.run(admission).changes !== 1) return refusalOf(s.keyState.get(hold.keyId), hold.amount, hold.now, hold.budget);
  s.insertHold.run(hold);
  s.entry.run(hold.keyId, hold.requestId, 'hold', hold.amount, hold.now, 0);
  return { admitted: true };
}

/** Captures an active hold at its cost; an expired one ("late") through admission, else capped. */
export function settle(s: LedgerStatements, settlement: Settlement): SettleResult {
  const { requestId, cost, now } = settlement;
  const periodStart = settlement.budget.periodStart;
  const active = s.closeHold.get('captured', now, requestId, 'active');
  if (active) {
    s.charge.run({ cost, unheld: active.amount, periodStart, keyId: active.key_id });
    s.entry.run(active.key_id, requestId, 'release', active.amount, now, active.seq);
    s.entry.run(active.key_id, requestId, 'capture', cost, now, 0);
    s.insertUsage.run(...usageValues(settlement.usage));
    return { outcome: 'captured', charged: cost };
  }
  // Late: a sweeper released the expired hold and its money may be spent. The work was done, so the
  // cost is charged if the key can cover again what the hold covered (the rest is the usual
  // overage); otherwise only what is available, never taking it below zero.
  const late = s.closeHold.get('captured', now, requestId, 'expired');
  if (late) {
    const key = s.keyState.get(late.key_id)!;
    const available = key.balance - key.held;
    const budgetRoom = settlement.budget.limit === null ? Infinity : settlement.budget.limit - budgetUsedOf(key, periodStart);
    const covered = Math.min(cost, late.amount);
    const admitted = available >= covered && budgetRoom >= covered;
    const charged = admitted ? cost : Math.max(0, Math.min(cost, available, budgetRoom));
    s.charge.run({ cost: charged, unheld: 0, periodStart, keyId: late.key_id });
    s.entry.run(late.key_id, requestId, 'capture', charged, now, 0);
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
  const { budget, now } = renewal;
  if (s.admit.run({ amount: hold.amount, keyId: hold.key_id, now, periodStart: budget.periodStart, budget: budget.limit }).changes !== 1) {
    return { outcome: 'refused', refusal: refusalOf(s.keyState.get(hold.key_id), hold.amount, now, budget) };
  }
  s.reactivate.run(hold.seq + 1, renewal.expiresAt, renewal.requestId);
  s.entry.run(hold.key_id, renewal.requestId, 'hold', hold.amount, renewal.now, hold.seq + 1);
  return { outcome: 'readmitted' };
}

/** Grows an active hold by a step, through the same admission as a new hold. */
export function growHold(s: LedgerStatements, growth: HoldGrowth): GrowOutcome {
  const hold = s.holdState.get(growth.requestId);
  if (!hold) return { outcome: 'missing' };
  if (hold.status !== 'active') return { outcome: hold.status === 'expired' ? 'expired' : 'closed' };
  const { amount, now, budget } = growth;
  if (s.admit.run({ amount, keyId: hold.key_id, now, periodStart: budget.periodStart, budget: budget.limit }).changes !== 1) {
    return { outcome: 'refused', refusal: refusalOf(s.keyState.get(hold.key_id), amount, now, budget) };
  }
  s.grow.run(amount, growth.requestId);
  s.entry.run(hold.key_id, growth.requestId, 'hold', amount, now, hold.seq + 1);
  return { outcome: 'grown' };
}

/** Releases an active hold without a charge; the usage row, if given, is written unless the hold is missing or closed. */
export function release(s: LedgerStatements, requestId: string, usage: UsageRecord | undefined, now: number): ReleaseOutcome {
  const active = s.closeHold.get('released', now, requestId, 'active');
  let outcome: ReleaseOutcome;
  if (active) {
    s.unhold.run(active.amount, active.key_id);
    s.entry.run(active.key_id, requestId, 'release', active.amount, now, active.seq);
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
    s.unhold.run(hold.amount, hold.key_id);
    s.entry.run(hold.key_id, request_id, 'release', hold.amount, now, hold.seq);
    released += 1;
  }
  return released;
}
