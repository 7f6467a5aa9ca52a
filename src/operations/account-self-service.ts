// What an account token's holder may do (docs/adr/0047-accounts.md, /v1/account): read the account, its
// usage and its keys, and create, cap and revoke the account's keys — never above what the operator
// allowed. A key it makes may name only the account's allowed_models (its whole list by default), and its
// rpm, tpm and concurrency may not exceed the config's `limits:` where those are set; its credit limit and
// budget are the holder's own business, bounded by the account's money anyway. The holder adds no money
// (no balance, no top-up) and sets no operator field (metadata, clamp_max_tokens). Another account's key
// is 404 key_not_found, word for word as a key that does not exist. Every check runs before any write.
import { nanoToUsd } from '../billing/money.js';
import type { Config } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { AccountRecord, AllowedModels, KeyRecord, Store, UsageGrouping } from '../storage/types.js';
import { accountObject } from './accounts.js';
import { allowedModelsOf } from './allowed-models.js';
import type { AccountHolderJson, AccountKeyJson, IssuedAccountKeyJson, KeyJson, ListPage, UsageJson, UsageSummaryJson } from './json-types.js';
import { keyObject } from './key-object.js';
import { issueKey, revokeKey, updateKey } from './keys.js';
import type { LimitsInput } from './limits-input.js';
import { listKeys, type KeyListInput } from './list-keys.js';
import { listUsage, summarizeUsage, type UsageFilterInput, type UsageListInput } from './usage.js';

/** The groupings of the holder's usage summary. */
export const ACCOUNT_USAGE_GROUPINGS: readonly UsageGrouping[] = ['key', 'model', 'day', 'hour', 'endpoint', 'session'];

/** The caps a holder may set on its keys (as in the admin API's `limits`, flat). */
export interface AccountKeyLimitsInput {
  readonly credit_limit?: unknown;
  readonly budget?: unknown;
  readonly budget_period?: unknown;
  readonly expires_at?: unknown;
  readonly rpm?: unknown;
  readonly tpm?: unknown;
  readonly max_concurrent?: unknown;
}

export interface AccountKeyInput extends AccountKeyLimitsInput {
  readonly name?: unknown;
  /** Model ids, or '*'; within the account's allowed_models (its list by default). */
  readonly allowed_models?: unknown;
}

/** The key object as the holder sees it: without the operator's metadata. */
export function accountKeyObject(key: KeyRecord, config: Config, now = Date.now()): AccountKeyJson {
  return withoutMetadata(keyObject(key, config, now));
}

function withoutMetadata(object: KeyJson): AccountKeyJson {
  const { metadata: _metadata, ...rest } = object;
  return rest;
}

/** GET /v1/account: the account object (without the operator's metadata) and what its usage adds up to. */
export async function accountSelf(store: Store, account: AccountRecord, now = Date.now()): Promise<AccountHolderJson> {
  const [keys, totals] = await Promise.all([store.accounts.keys(account.id), store.usage.summarize({ accountId: account.id }, 'account')]);
  const sum = totals[0];
  const { metadata: _metadata, ...object } = accountObject(account, now);
  return {
    ...object,
    totals: {
      keys_active: keys.filter((k) => k.status === 'active').length,
      keys_revoked: keys.filter((k) => k.status !== 'active').length,
      requests: sum?.requests ?? 0,
      errors: sum?.errors ?? 0,
      input_tokens: sum?.inputTokens ?? 0,
      cached_input_tokens: sum?.cachedInputTokens ?? 0,
      output_tokens: sum?.outputTokens ?? 0,
      reasoning_tokens: sum?.reasoningTokens ?? 0,
      cost: nanoToUsd(sum?.cost ?? 0),
    },
  };
}

/** The usage rows of the account's keys, newest first (key_id narrows to one of them). */
export function listAccountUsage(store: Store, account: AccountRecord, input: UsageListInput): Promise<ListPage<UsageJson>> {
  return listUsage(store, input, { accountId: account.id });
}

export function summarizeAccountUsage(store: Store, account: AccountRecord, input: UsageFilterInput & { readonly group_by?: unknown }): Promise<UsageSummaryJson> {
  return summarizeUsage(store, input, ACCOUNT_USAGE_GROUPINGS, { accountId: account.id });
}

/** The account's keys in creation order, a page at a time. */
export async function listAccountKeys(store: Store, config: Config, account: AccountRecord, input: KeyListInput, now = Date.now()): Promise<ListPage<AccountKeyJson>> {
  // The account is the holder's whatever the input says (the route's schema has no account_id anyway).
  const page = await listKeys(store, config, { ...input, account_id: account.id }, now);
  return { ...page, data: page.data.map(withoutMetadata) };
}

/** The key, if it is this account's; another account's is as unknown as a key that does not exist. */
async function requireOwnKey(store: Store, account: AccountRecord, id: string): Promise<KeyRecord> {
  const key = await store.keys.get(id);
  if (!key || key.accountId !== account.id) throw new GatewayError('key_not_found', { message: `No key with id ${id}.` });
  return key;
}

function invalid(param: string, message: string): never {
  throw new GatewayError('invalid_request', { param, message });
}

/** A key's models: within the account's (its whole list when none are named). */
function modelsWithin(account: AccountRecord, value: unknown, config: Config): AllowedModels {
  const bound = account.allowedModels;
  // The account's own list, less models the config no longer has.
  if (value === undefined) return bound === '*' ? bound : bound.filter((m) => config.models.has(m));
  if (value !== '*' && (!Array.isArray(value) || value.some((m) => typeof m !== 'string'))) {
    invalid('allowed_models', "Invalid 'allowed_models': expected a list of model ids, or \"*\".");
  }
  const models = allowedModelsOf(value as readonly string[] | '*', config);
  if (bound === '*') return models;
  if (models === '*') {
    invalid('allowed_models', `Invalid 'allowed_models': this account's keys may use only ${bound.join(', ')}; name them instead of "*".`);
  }
  const outside = models.filter((m) => !bound.includes(m));
  if (outside.length > 0) {
    invalid('allowed_models', `Invalid 'allowed_models': ${outside.join(', ')} ${outside.length === 1 ? 'is' : 'are'} not among this account's models (${bound.join(', ')}).`);
  }
  return models;
}

const RATE_FIELDS = [
  ['rpm', 'rpm'],
  ['tpm', 'tpm'],
  ['max_concurrent', 'maxConcurrent'],
] as const;

/**
 * rpm, tpm and max_concurrent at most the config's `limits:` where those are set: the operator's defaults
 * are the most a holder may give a key. A value's own shape is checked after (limits-input.ts), as for
 * every face; null (clear the key's own value) leaves the default in force, which is allowed.
 */
function withinOperatorLimits(input: AccountKeyLimitsInput, config: Config): void {
  for (const [field, name] of RATE_FIELDS) {
    const ceiling = config.limits[name];
    const value = input[field];
    if (ceiling === null || value === undefined || value === null) continue;
    const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
    if (typeof n === 'number' && n > ceiling) {
      invalid(field, `Invalid '${field}': at most ${ceiling}, the gateway's limit (got ${n}).`);
    }
  }
}

function limitsOf(input: AccountKeyLimitsInput): LimitsInput {
  const { credit_limit, budget, budget_period, expires_at, rpm, tpm, max_concurrent } = input;
  const limits = { credit_limit, budget, budget_period, expires_at, rpm, tpm, max_concurrent };
  return Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)) as LimitsInput;
}

function nameOf(value: unknown): string {
  if (typeof value !== 'string') invalid('name', "Invalid 'name': expected a string.");
  return value;
}

/** A new key drawing on the account (no balance of its own), and its secret, shown once. */
export async function createAccountKey(
  store: Store,
  config: Config,
  account: AccountRecord,
  input: AccountKeyInput,
  now = Date.now(),
): Promise<{ body: IssuedAccountKeyJson; replay: IssuedAccountKeyJson }> {
  const name = nameOf(input.name);
  const allowedModels = modelsWithin(account, input.allowed_models, config);
  withinOperatorLimits(input, config);
  const { key, secret } = await issueKey(store, config, { name, accountId: account.id, allowedModels, limits: limitsOf(input) }, now);
  const object = accountKeyObject(key, config, now);
  return { body: { ...object, key: secret }, replay: { ...object, key: null } };
}

/** Changes the fields given (one statement), after checking every one of them. */
export async function updateAccountKey(
  store: Store,
  config: Config,
  account: AccountRecord,
  id: string,
  input: AccountKeyLimitsInput & { readonly name?: unknown },
  now = Date.now(),
): Promise<AccountKeyJson> {
  await requireOwnKey(store, account, id);
  withinOperatorLimits(input, config);
  const key = await updateKey(store, config, id, { ...(input.name !== undefined ? { name: nameOf(input.name) } : {}), limits: limitsOf(input) }, now);
  return accountKeyObject(key, config, now);
}

/** Revokes one of the account's keys: it answers 401 from now on; the money stays in the account. */
export async function revokeAccountKey(store: Store, config: Config, account: AccountRecord, id: string, now = Date.now()): Promise<AccountKeyJson> {
  await requireOwnKey(store, account, id);
  return accountKeyObject(await revokeKey(store, id, now), config, now);
}
