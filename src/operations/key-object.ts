// The key object every face shows (product.md §2, §8): `keys list/show --json`, the admin API and, for the
// calling key, GET /v1/key. Limits are the ones in force — the key's own, else the config's `limits:`.
import { availableToKey, creditLeft } from '../billing/available.js';
import { budgetStatusOf } from '../billing/budget.js';
import { nanoToUsd } from '../billing/money.js';
import type { Config } from '../config/types.js';
import type { KeyRecord } from '../storage/types.js';
import type { KeyHolderJson, KeyJson } from './json-types.js';

/** The key's effective limits: its own values, else the config defaults (null: no limit). */
export function effectiveLimits(key: KeyRecord, config: Config) {
  const own = key.limits;
  const defaults = config.limits;
  const budget = own.budget ?? defaults.budget;
  return {
    rpm: own.rpm ?? defaults.rpm,
    tpm: own.tpm ?? defaults.tpm,
    maxConcurrent: own.maxConcurrent ?? defaults.maxConcurrent,
    budget,
    budgetPeriod: budget === null ? null : (own.budgetPeriod ?? defaults.budgetPeriod),
  };
}

const nullableUsd = (nano: number | null) => (nano === null ? null : nanoToUsd(nano));

export function keyObject(key: KeyRecord, config: Config, now = Date.now()): KeyJson {
  const limits = effectiveLimits(key, config);
  const budget = limits.budget === null ? undefined : budgetStatusOf(key, config.limits, now);
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    // The account's money (a personal account's is the key's own), and what this key can still hold of it.
    balance: nanoToUsd(key.account.balance),
    held: nanoToUsd(key.account.held),
    available: nanoToUsd(availableToKey(key)),
    account_id: key.accountId,
    credit_limit: key.creditLimit === null ? null : nanoToUsd(key.creditLimit),
    credit_left: nullableUsd(creditLeft(key)),
    spent: nanoToUsd(key.spent),
    allowed_models: key.allowedModels === '*' ? '*' : [...key.allowedModels],
    status: key.status,
    created_at: key.createdAt,
    limits: {
      rpm: limits.rpm,
      tpm: limits.tpm,
      max_concurrent: limits.maxConcurrent,
      budget: limits.budget === null ? null : nanoToUsd(limits.budget),
      budget_period: limits.budgetPeriod,
    },
    expires_at: key.expiresAt === null ? null : new Date(key.expiresAt).toISOString(),
    clamp_max_tokens: key.clampMaxTokens,
    budget_used: budget ? nanoToUsd(budget.used) : null,
    budget_resets_at: budget ? new Date(budget.resetsAt).toISOString() : null,
    metadata: key.metadata,
  };
}

/**
 * GET /v1/key's `data`: the calling key as its holder sees it (the shape OpenRouter clients know, plus the
 * limit fields of the key object) — no prefix, status or metadata, and what it has spent so far.
 */
export function keyHolderJson(key: KeyRecord, config: Config, now = Date.now()): KeyHolderJson {
  const object = keyObject(key, config, now);
  return {
    id: key.id,
    name: key.name,
    balance: object.balance,
    held: object.held,
    available: object.available,
    usage: nanoToUsd(key.spent),
    credit_limit: object.credit_limit,
    credit_left: object.credit_left,
    account: { id: key.accountId, name: key.account.name, personal: key.account.personal, available: nanoToUsd(key.account.balance - key.account.held) },
    allowed_models: object.allowed_models,
    limits: object.limits,
    expires_at: object.expires_at,
    budget_used: object.budget_used,
    budget_resets_at: object.budget_resets_at,
  };
}
