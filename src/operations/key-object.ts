// The key object every face shows (product.md §2, §8): `keys list/show --json`, the admin API and, for the
// calling key, GET /v1/key. Limits are the ones in force — the key's own, else the config's `limits:`.
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

export function keyObject(key: KeyRecord, config: Config, now = Date.now()): KeyJson {
  const limits = effectiveLimits(key, config);
  const budget = limits.budget === null ? undefined : budgetStatusOf(key, config.limits, now);
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    balance: nanoToUsd(key.balance),
    held: nanoToUsd(key.held),
    available: nanoToUsd(key.balance - key.held),
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
    allowed_models: object.allowed_models,
    limits: object.limits,
    expires_at: object.expires_at,
    budget_used: object.budget_used,
    budget_resets_at: object.budget_resets_at,
  };
}
