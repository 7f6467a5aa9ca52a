// The answer when the ledger's admission refuses a hold: the same 401 as any bad key for a key revoked or
// expired meanwhile, 402 account_suspended, 402 budget_exceeded when the key's or the account's spend cap
// for the period does not cover it, 402 credit_limit_reached for the key's lifetime cap, else 402
// insufficient_balance (with the largest max_tokens that would have fitted).
import type { LimitsConfig } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { KeyRecord, Refusal } from '../storage/types.js';
import { budgetPeriodOf, budgetExceededError } from './budget.js';
import { formatUsd, nanoToUsd } from './money.js';
import { nextPeriodStart } from './budget-period.js';
import { insufficientBalanceError, type HoldSizing } from './insufficient-balance.js';

export function refusalError(refusal: Refusal, sizing: HoldSizing, key: KeyRecord, defaults: LimitsConfig, now: number): GatewayError {
  if (refusal.reason === 'inactive') return new GatewayError('invalid_api_key');
  if (refusal.reason === 'suspended') {
    return new GatewayError('account_suspended', { message: `The key's account (${key.accountId}) is suspended: it cannot be charged. Ask the operator to resume it.` });
  }
  const budget = key.limits.budget ?? defaults.budget;
  if (refusal.reason === 'budget' && budget !== null) {
    const period = budgetPeriodOf(key, defaults);
    return budgetExceededError(budget, refusal.budgetUsed, sizing.hold, nextPeriodStart(now, period), period);
  }
  const accountBudget = key.account.limits.budget;
  if (refusal.reason === 'account_budget' && accountBudget !== null) {
    const period = key.account.limits.budgetPeriod ?? 'month';
    return budgetExceededError(accountBudget, refusal.budgetUsed, sizing.hold, nextPeriodStart(now, period), period, 'account');
  }
  if (refusal.reason === 'credit_limit' && key.creditLimit !== null) {
    const left = Math.max(refusal.available, 0);
    return new GatewayError('credit_limit_reached', {
      message: `Credit limit reached: this request needs a hold of $${formatUsd(sizing.hold)} but the key has $${formatUsd(left)} left of its $${formatUsd(key.creditLimit)} credit limit. Ask the account's owner to raise it.`,
      metadata: { hold: nanoToUsd(sizing.hold), available: nanoToUsd(left), credit_limit: nanoToUsd(key.creditLimit) },
    });
  }
  return insufficientBalanceError(sizing, refusal.available);
}
