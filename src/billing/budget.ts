// A key's spend cap per period (product.md §8): which cap applies (the key's own, else the config's
// `limits:` default), the period it counts in, and the 402 answer when it does not cover a hold.
// The cap itself is enforced by the ledger's atomic admission, beside the balance.
import type { LimitsConfig } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { BudgetWindow, KeyRecord } from '../storage/types.js';
import { nextPeriodStart, periodStart, type BudgetPeriod } from './budget-period.js';
import { formatUsd, nanoToUsd, type Nano } from './money.js';

/** The key's budget period: its own, else the config default (`month` when neither is set). */
export function budgetPeriodOf(key: KeyRecord, defaults: LimitsConfig): BudgetPeriod {
  return key.limits.budgetPeriod ?? defaults.budgetPeriod;
}

export function budgetWindowOf(key: KeyRecord, defaults: LimitsConfig, now: number): BudgetWindow {
  return { limit: key.limits.budget ?? defaults.budget, periodStart: periodStart(now, budgetPeriodOf(key, defaults)) };
}

/** The account's budget window: its own budget and period (`month` when unset), counted like a key's. */
export function accountBudgetWindowOf(key: KeyRecord, now: number): BudgetWindow {
  const limits = key.account.limits;
  return { limit: limits.budget, periodStart: periodStart(now, limits.budgetPeriod ?? 'month') };
}

export interface BudgetStatus {
  readonly limit: Nano | null;
  /** Captured in the current period plus active holds. */
  readonly used: Nano;
  /** Epoch ms when the current period ends. */
  readonly resetsAt: number;
}

/** What a key object shows: the cap, what counts against it now, and when it resets. */
export function budgetStatusOf(key: KeyRecord, defaults: LimitsConfig, now: number): BudgetStatus {
  const period = budgetPeriodOf(key, defaults);
  const spent = key.budgetPeriodStart === periodStart(now, period) ? key.budgetSpent : 0;
  return { limit: key.limits.budget ?? defaults.budget, used: spent + key.held, resetsAt: nextPeriodStart(now, period) };
}

const PERIOD_NAMES: Readonly<Record<BudgetPeriod, string>> = { day: 'daily', week: 'weekly', month: 'monthly' };

export function budgetExceededError(limit: Nano, used: Nano, hold: Nano, resetsAt: number, period: BudgetPeriod, whose: 'key' | 'account' = 'key'): GatewayError {
  const resets = new Date(resetsAt).toISOString();
  return new GatewayError('budget_exceeded', {
    message: `Budget exceeded: this request needs a hold of $${formatUsd(hold)} but the ${whose === 'key' ? 'key' : "key's account"} has used $${formatUsd(used)} of its $${formatUsd(limit)} ${PERIOD_NAMES[period]} budget, which resets at ${resets}.`,
    metadata: { budget: nanoToUsd(limit), used: nanoToUsd(used), resets_at: resets },
  });
}
