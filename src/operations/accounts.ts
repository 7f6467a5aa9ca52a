// The operator's verbs on accounts, written once (docs/adr/0047-accounts.md): `tollgate accounts ...`, the
// admin API's /admin/v1/accounts and the dashboard call these; the account token's holder reaches some of
// them through /v1/account. Input is validated here (400 invalid_request naming the field, 404
// account_not_found), so every face refuses the same things the same way.
import { randomUUID } from 'node:crypto';
import { nextPeriodStart, periodStart } from '../billing/budget-period.js';
import { formatUsd, MAX_NANO, MAX_USD, nanoToUsd, type Nano } from '../billing/money.js';
import { GatewayError } from '../errors.js';
import { generateAccountId, generateAccountToken, hashKeySecret, keyPrefix } from '../keys/secret.js';
import type { AccountChange, AccountPageQuery, AccountRecord, AccountStatus, Credit, CreditOutcome, Store } from '../storage/types.js';
import type { Config } from '../config/types.js';
import { allowedModelsOf } from './allowed-models.js';
import { usdAmount } from './amount-input.js';
import type { AccountJson } from './json-types.js';
import { budgetOf, periodOf } from './limits-input.js';
import { metadataOf } from './metadata-input.js';
import { noteOf, type CreditOptions } from './credit-input.js';
import { decodeCursor, listPage, pageSize, type ListPage } from './page.js';

const MAX_NAME_LENGTH = 200;

export async function requireAccount(store: Store, id: string): Promise<AccountRecord> {
  const account = typeof id === 'string' ? await store.accounts.get(id) : undefined;
  if (!account) throw new GatewayError('account_not_found', { message: `No account with id ${String(id)}.` });
  return account;
}

function nameOf(name: unknown): string {
  if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_NAME_LENGTH) {
    throw new GatewayError('invalid_request', { param: 'name', message: `Invalid 'name': it must be a non-empty string of at most ${MAX_NAME_LENGTH} characters.` });
  }
  return name;
}

function statusOf(value: unknown): AccountStatus | undefined {
  if (value === undefined) return undefined;
  if (value === 'active' || value === 'suspended') return value;
  throw new GatewayError('invalid_request', { param: 'status', message: "Invalid 'status': expected active or suspended." });
}

/** What an account's creation or change may name (CLI flags and admin JSON alike). */
export interface AccountInput {
  readonly name?: unknown;
  /** The opening balance (creation only), USD. */
  readonly balance?: unknown;
  readonly budget?: unknown;
  readonly budget_period?: unknown;
  readonly metadata?: unknown;
  /** The models the account token may give its own keys: model ids or '*' (the default). */
  readonly allowed_models?: unknown;
}

function allowListOf(value: unknown, config: Config) {
  if (value === '*') return '*' as const;
  if (!Array.isArray(value) || value.some((m) => typeof m !== 'string')) {
    throw new GatewayError('invalid_request', { param: 'allowed_models', message: "Invalid 'allowed_models': expected a list of model ids, or \"*\"." });
  }
  return allowedModelsOf(value as string[], config);
}

/** The budget fields of an input: a budget needs its period (`month` when it is given alone). */
function budgetChange(input: AccountInput): Pick<AccountChange, 'budget' | 'budgetPeriod'> {
  const change: { budget?: Nano | null; budgetPeriod?: AccountChange['budgetPeriod'] } = {};
  if (input.budget !== undefined) change.budget = budgetOf(input.budget);
  if (input.budget_period !== undefined) change.budgetPeriod = periodOf(input.budget_period);
  return change;
}

export async function createAccount(store: Store, config: Config, input: AccountInput, options: CreditOptions = {}): Promise<AccountRecord> {
  const name = nameOf(input.name);
  const allowedModels = input.allowed_models === undefined ? '*' : allowListOf(input.allowed_models, config);
  const balance = input.balance === undefined ? 0 : usdAmount('balance', input.balance, { allowZero: true });
  const budget = budgetChange(input);
  const metadata = input.metadata === undefined ? undefined : metadataOf(input.metadata);
  const now = options.now ?? Date.now();
  return store.accounts.create({
    id: generateAccountId(),
    name,
    initialBalance: balance,
    topupRequestId: options.requestId ?? `topup_${randomUUID()}`,
    now,
    limits: { budget: budget.budget ?? null, budgetPeriod: budget.budgetPeriod ?? (budget.budget != null ? 'month' : null) },
    ...(metadata ? { metadata } : {}),
    allowedModels,
  });
}

/** Changes the fields given (one statement), after checking every one of them. */
export async function updateAccount(store: Store, config: Config, id: string, input: AccountInput & { readonly status?: unknown }): Promise<AccountRecord> {
  const change: AccountChange = {
    ...(input.allowed_models !== undefined ? { allowedModels: allowListOf(input.allowed_models, config) } : {}),
    ...(input.name !== undefined ? { name: nameOf(input.name) } : {}),
    ...(input.status !== undefined ? { status: statusOf(input.status)! } : {}),
    ...(input.metadata !== undefined ? { metadata: metadataOf(input.metadata) } : {}),
    ...budgetChange(input),
  };
  if (input.balance !== undefined) {
    throw new GatewayError('invalid_request', { param: 'balance', message: "An account's balance changes only by a top-up or an adjustment." });
  }
  const current = await requireAccount(store, id);
  if (change.budget != null && change.budgetPeriod === undefined && current.limits.budgetPeriod === null) {
    return (await store.accounts.update(id, { ...change, budgetPeriod: 'month' }))!;
  }
  return (await store.accounts.update(id, change))!;
}

/** Suspended: none of its keys can place a hold (402 account_suspended); credits and reads still work. */
export async function setAccountStatus(store: Store, id: string, status: AccountStatus): Promise<AccountRecord> {
  await requireAccount(store, id);
  return (await store.accounts.update(id, { status }))!;
}

/** The answer to a credit that was not written, as an error; undefined when it was applied. */
export async function creditFailure(store: Store, outcome: CreditOutcome, credit: Credit, what: string): Promise<GatewayError | undefined> {
  if (outcome === 'applied' || outcome === 'duplicate') return undefined;
  if (outcome === 'missing') {
    return credit.keyId !== undefined
      ? new GatewayError('key_not_found', { message: `No key with id ${credit.keyId}.` })
      : new GatewayError('account_not_found', { message: `No account with id ${String(credit.accountId)}.` });
  }
  if (outcome === 'revoked') {
    return new GatewayError('key_revoked', { message: `Key ${credit.keyId} is revoked: its balance can no longer change, so ${what} was refused. Issue a new key instead.` });
  }
  const accountId = credit.accountId ?? (await store.keys.get(credit.keyId!))?.accountId;
  const account = accountId === undefined ? undefined : await store.accounts.get(accountId);
  const balance = account?.balance ?? 0;
  if (outcome === 'overdraw') {
    return new GatewayError('invalid_request', {
      param: 'amount',
      message: `An adjustment of ${formatUsd(credit.amount)} USD would take the available balance (${formatUsd(balance - (account?.held ?? 0))} USD) below zero.`,
    });
  }
  return new GatewayError('invalid_request', {
    param: 'amount',
    message: `${what[0]!.toUpperCase()}${what.slice(1)} of ${formatUsd(credit.amount)} USD would take the balance (${formatUsd(balance)} USD) past ${MAX_USD} USD, the largest balance the ledger holds; at most ${formatUsd(Math.max(MAX_NANO - balance, 0))} USD more fits.`,
  });
}

async function creditAccount(store: Store, credit: Credit, what: string): Promise<AccountRecord> {
  const failure = await creditFailure(store, await store.accounts.credit(credit), credit, what);
  if (failure) throw failure;
  return requireAccount(store, credit.accountId!);
}

export async function topUpAccount(store: Store, id: string, amount: unknown, note?: unknown, options: CreditOptions = {}): Promise<AccountRecord> {
  const nano = usdAmount('amount', amount, { allowZero: false });
  const credit: Credit = {
    accountId: id,
    kind: 'topup',
    amount: nano,
    note: noteOf('note', note, false),
    requestId: options.requestId ?? `topup_${randomUUID()}`,
    now: options.now ?? Date.now(),
  };
  return creditAccount(store, credit, 'a top-up');
}

/** A correction of either sign, with its reason; never below the available balance, nor past the maximum. */
export async function adjustAccount(store: Store, id: string, amount: unknown, reason: unknown, options: CreditOptions = {}): Promise<AccountRecord> {
  const nano = usdAmount('amount', amount, { allowZero: false, allowNegative: true });
  const credit: Credit = {
    accountId: id,
    kind: 'adjust',
    amount: nano,
    note: noteOf('reason', reason, true),
    requestId: options.requestId ?? `adjust_${randomUUID()}`,
    now: options.now ?? Date.now(),
  };
  return creditAccount(store, credit, 'an adjustment');
}

/** A new self-service token (the old one, if any, stops working at once); shown once, only its hash kept. */
export async function issueAccountToken(store: Store, id: string): Promise<{ account: AccountRecord; token: string }> {
  await requireAccount(store, id);
  const token = generateAccountToken();
  const account = (await store.accounts.setToken(id, { prefix: keyPrefix(token), hash: hashKeySecret(token) }))!;
  return { account, token };
}

export async function revokeAccountToken(store: Store, id: string): Promise<AccountRecord> {
  await requireAccount(store, id);
  return (await store.accounts.setToken(id, null))!;
}

/** The account object every face shows. */
export function accountObject(account: AccountRecord, now = Date.now()): AccountJson {
  const { budget, budgetPeriod } = account.limits;
  const period = budgetPeriod ?? 'month';
  const spentInPeriod = account.budgetPeriodStart === periodStart(now, period) ? account.budgetSpent : 0;
  return {
    id: account.id,
    object: 'account',
    name: account.name,
    status: account.status,
    personal: account.personal,
    balance: nanoToUsd(account.balance),
    held: nanoToUsd(account.held),
    available: nanoToUsd(account.balance - account.held),
    spent: nanoToUsd(account.spent),
    budget: budget === null ? null : nanoToUsd(budget),
    budget_period: budget === null ? null : period,
    budget_used: budget === null ? null : nanoToUsd(spentInPeriod + account.held),
    budget_resets_at: budget === null ? null : new Date(nextPeriodStart(now, period)).toISOString(),
    allowed_models: account.allowedModels === '*' ? '*' : [...account.allowedModels],
    token_prefix: account.tokenPrefix,
    metadata: account.metadata,
    created_at: account.createdAt,
  };
}

export interface AccountListInput {
  readonly status?: unknown;
  readonly name?: unknown;
  /** Personal accounts (one per key made without an account) are left out unless this is true. */
  readonly include_personal?: unknown;
  readonly limit?: unknown;
  readonly after?: unknown;
}

interface AccountPosition {
  c: string;
  i: string;
}

const isAccountPosition = (p: unknown): p is AccountPosition =>
  typeof p === 'object' && p !== null && typeof (p as AccountPosition).c === 'string' && typeof (p as AccountPosition).i === 'string';

function flag(field: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new GatewayError('invalid_request', { param: field, message: `Invalid '${field}': expected true or false.` });
}

export async function listAccounts(store: Store, input: AccountListInput = {}, now = Date.now()): Promise<ListPage<AccountJson>> {
  const limit = pageSize(input.limit);
  const status = statusOf(input.status);
  if (input.name !== undefined && typeof input.name !== 'string') {
    throw new GatewayError('invalid_request', { param: 'name', message: "Invalid 'name': expected a name prefix." });
  }
  const after = input.after === undefined ? undefined : decodeCursor('accounts', input.after, isAccountPosition);
  const query: AccountPageQuery = {
    ...(status ? { status } : {}),
    ...(input.name ? { namePrefix: input.name } : {}),
    includePersonal: flag('include_personal', input.include_personal),
    ...(after ? { after: { createdAt: after.c, id: after.i } } : {}),
    limit: limit + 1,
  };
  const rows = await store.accounts.page(query);
  return listPage('accounts', rows, limit, (a) => accountObject(a, now), (a) => ({ c: a.createdAt, i: a.id }));
}
