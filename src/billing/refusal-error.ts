// The answer when the ledger's admission refuses a hold: the same 401 as any bad key for a key revoked or
// expired meanwhile, 402 budget_exceeded when the period's spend cap does not cover it, else 402
// insufficient_balance (with the largest max_tokens that would have fitted).
import type { LimitsConfig } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { KeyRecord, Refusal } from '../storage/types.js';
import { budgetPeriodOf, budgetExceededError } from './budget.js';
import { nextPeriodStart } from './budget-period.js';
import { insufficientBalanceError, type HoldSizing } from './insufficient-balance.js';

export function refusalError(refusal: Refusal, sizing: HoldSizing, key: KeyRecord, defaults: LimitsConfig, now: number): GatewayError {
  if (refusal.reason === 'inactive') return new GatewayError('invalid_api_key');
  const budget = key.limits.budget ?? defaults.budget;
  if (refusal.reason === 'budget' && budget !== null) {
    const period = budgetPeriodOf(key, defaults);
    return budgetExceededError(budget, refusal.budgetUsed, sizing.hold, nextPeriodStart(now, period), period);
  }
  return insufficientBalanceError(sizing, refusal.available);
}
