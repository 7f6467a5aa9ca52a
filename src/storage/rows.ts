// Row shapes shared by every dialect: the same columns in SQLite and PostgreSQL (money and times as
// integers; the allow-list and the attempts as JSON text), and their mapping to the storage records.
import type { BudgetPeriod } from '../billing/budget-period.js';
import type {
  AccountLimits,
  AccountRecord,
  AccountStatus,
  AllowedModels,
  Attempt,
  BudgetWindow,
  KeyAccount,
  KeyLimits,
  KeyMetadata,
  KeyRecord,
  LimitsPatch,
  Refusal,
  RefusalReason,
  UsageEndpoint,
  UsageRecord,
  UsageSource,
} from './types.js';

export interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  held: number;
  spent: number;
  account_id: string;
  credit_limit: number | null;
  a_name: string;
  a_balance: number;
  a_held: number;
  a_spent: number;
  a_status: AccountStatus;
  a_budget: number | null;
  a_budget_period: BudgetPeriod | null;
  a_budget_spent: number;
  a_budget_period_start: number;
  a_personal: number | boolean;
  allowed_models: string;
  status: 'active' | 'revoked';
  created_at: string;
  rpm: number | null;
  tpm: number | null;
  max_concurrent: number | null;
  budget: number | null;
  budget_period: BudgetPeriod | null;
  expires_at: number | null;
  budget_spent: number;
  budget_period_start: number;
  metadata: string;
  clamp_max_tokens: number;
}

/** A key's columns and its account's, read together from KEY_FROM (`k` the key, `a` its account). */
export const KEY_COLUMNS =
  'k.id, k.name, k.prefix, k.held, k.spent, k.allowed_models, k.status, k.created_at, k.rpm, k.tpm, k.max_concurrent, k.budget, k.budget_period, ' +
  'k.expires_at, k.budget_spent, k.budget_period_start, k.metadata, k.clamp_max_tokens, k.account_id, k.credit_limit, a.name AS a_name, ' +
  'a.balance AS a_balance, a.held AS a_held, a.spent AS a_spent, a.status AS a_status, a.budget AS a_budget, a.budget_period AS a_budget_period, ' +
  'a.budget_spent AS a_budget_spent, a.budget_period_start AS a_budget_period_start, a.personal AS a_personal';

/** The personal account of a key made without one: 'acct_' + the key id's hex (migration 11 names them so too). */
export function personalAccountId(keyId: string): string {
  return `acct_${keyId.startsWith('key_') ? keyId.slice(4) : keyId}`;
}

export const KEY_FROM = 'api_keys k JOIN accounts a ON a.id = k.account_id';

export interface AccountRow {
  id: string;
  name: string;
  balance: number;
  held: number;
  spent: number;
  status: AccountStatus;
  budget: number | null;
  budget_period: BudgetPeriod | null;
  budget_spent: number;
  budget_period_start: number;
  metadata: string;
  allowed_models: string;
  personal: number | boolean;
  token_prefix: string | null;
  created_at: string;
}

export const ACCOUNT_COLUMNS =
  'id, name, balance, held, spent, status, budget, budget_period, budget_spent, budget_period_start, metadata, allowed_models, personal, token_prefix, created_at';

const NO_ACCOUNT_LIMITS: AccountLimits = Object.freeze({ budget: null, budgetPeriod: null });

function accountLimitsOf(budget: number | null, period: BudgetPeriod | null): AccountLimits {
  return budget === null && period === null ? NO_ACCOUNT_LIMITS : { budget: budget === null ? null : Number(budget), budgetPeriod: period };
}

export function accountRecordOf(row: AccountRow): AccountRecord {
  return {
    id: row.id,
    name: row.name,
    balance: Number(row.balance),
    held: Number(row.held),
    spent: Number(row.spent),
    status: row.status,
    limits: accountLimitsOf(row.budget, row.budget_period),
    budgetSpent: Number(row.budget_spent),
    budgetPeriodStart: Number(row.budget_period_start),
    metadata: parseMetadata(row.metadata),
    allowedModels: parseAllowList(row.allowed_models),
    personal: row.personal === true || row.personal === 1,
    tokenPrefix: row.token_prefix,
    createdAt: row.created_at,
  };
}

function keyAccountOf(row: KeyRow): KeyAccount {
  return {
    id: row.account_id,
    name: row.a_name,
    balance: Number(row.a_balance),
    held: Number(row.a_held),
    spent: Number(row.a_spent),
    status: row.a_status,
    limits: accountLimitsOf(row.a_budget, row.a_budget_period),
    budgetSpent: Number(row.a_budget_spent),
    budgetPeriodStart: Number(row.a_budget_period_start),
    personal: row.a_personal === true || row.a_personal === 1,
  };
}

const NO_METADATA: KeyMetadata = Object.freeze({});

/** Most keys carry none; only those that do pay for a parse. */
function parseMetadata(text: string): KeyMetadata {
  return text === '{}' ? NO_METADATA : (Object.freeze(JSON.parse(text)) as KeyMetadata);
}

/** The limits columns a LimitsPatch may set, by field (the key update of listing-sql.ts sets them here too). */
const LIMIT_COLUMNS: Record<keyof LimitsPatch, string> = {
  rpm: 'rpm',
  tpm: 'tpm',
  maxConcurrent: 'max_concurrent',
  budget: 'budget',
  budgetPeriod: 'budget_period',
  expiresAt: 'expires_at',
  clampMaxTokens: 'clamp_max_tokens',
  creditLimit: 'credit_limit',
};

/**
 * `SET` assignments and their values for the limits fields a patch names, booleans (clamp_max_tokens)
 * as 0/1 on both dialects; the placeholders come from `placeholder(i)`, i = 1.. in this list's order.
 */
export function limitsAssignments(patch: LimitsPatch, placeholder: (index: number) => string): { sql: string; values: unknown[] } {
  const parts: string[] = [];
  const values: unknown[] = [];
  for (const [field, column] of Object.entries(LIMIT_COLUMNS) as Array<[keyof LimitsPatch, string]>) {
    if (!(field in patch) || patch[field] === undefined) continue;
    const value = patch[field];
    values.push(typeof value === 'boolean' ? Number(value) : value);
    parts.push(`${column} = ${placeholder(values.length)}`);
  }
  return { sql: parts.join(', '), values };
}

function limitsOf(row: KeyRow): KeyLimits {
  if (row.rpm === null && row.tpm === null && row.max_concurrent === null && row.budget === null && row.budget_period === null) return NONE;
  return { rpm: row.rpm, tpm: row.tpm, maxConcurrent: row.max_concurrent, budget: row.budget, budgetPeriod: row.budget_period };
}

const NONE: KeyLimits = Object.freeze({ rpm: null, tpm: null, maxConcurrent: null, budget: null, budgetPeriod: null });

// Allow-lists are re-read on every authenticated request; parsing each distinct one once is enough.
const parsedAllowLists = new Map<string, AllowedModels>();

function parseAllowList(text: string): AllowedModels {
  let parsed = parsedAllowLists.get(text);
  if (parsed === undefined) {
    parsed = text === '*' ? '*' : Object.freeze(JSON.parse(text) as string[]);
    if (parsedAllowLists.size > 10_000) parsedAllowLists.clear();
    parsedAllowLists.set(text, parsed);
  }
  return parsed;
}

export function serialiseAllowList(models: AllowedModels): string {
  return models === '*' ? '*' : JSON.stringify([...models]);
}

export function keyRecordOf(row: KeyRow): KeyRecord {
  const account = keyAccountOf(row);
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    balance: account.balance,
    held: row.held,
    spent: row.spent,
    accountId: row.account_id,
    account,
    creditLimit: row.credit_limit === null ? null : Number(row.credit_limit),
    allowedModels: parseAllowList(row.allowed_models),
    status: row.status,
    createdAt: row.created_at,
    limits: limitsOf(row),
    expiresAt: row.expires_at,
    budgetSpent: row.budget_spent,
    budgetPeriodStart: row.budget_period_start,
    clampMaxTokens: row.clamp_max_tokens === 1,
    metadata: parseMetadata(row.metadata),
  };
}

export interface UsageRow {
  request_id: string;
  created_at: number;
  key_id: string;
  model: string | null;
  provider: string | null;
  upstream_model: string | null;
  status: number;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cost: number;
  usage_source: UsageSource;
  attempts: string;
  cache_write_tokens: number;
  endpoint: UsageEndpoint | null;
  error_code: string | null;
  error_message: string | null;
  duration_ms: number | null;
  first_token_ms: number | null;
  session_id: string | null;
}

const attemptsJson = (attempts: readonly Attempt[]) =>
  JSON.stringify(attempts.map((a) => ({ provider: a.provider, status: a.status, duration_ms: a.durationMs })));

/**
 * Each usage_records column (the UsageRow's fields, every one of them: the compiler checks) and how a
 * record gives its value: the one list the insert's columns, its values and the JSON rows all follow.
 */
const USAGE_VALUES = {
  request_id: (u) => u.requestId,
  created_at: (u) => u.time,
  key_id: (u) => u.keyId,
  model: (u) => u.model,
  provider: (u) => u.provider,
  upstream_model: (u) => u.upstreamModel,
  status: (u) => u.status,
  input_tokens: (u) => u.inputTokens,
  cached_input_tokens: (u) => u.cachedInputTokens,
  output_tokens: (u) => u.outputTokens,
  reasoning_tokens: (u) => u.reasoningTokens,
  cost: (u) => u.cost,
  usage_source: (u) => u.usageSource,
  attempts: (u) => attemptsJson(u.attempts),
  cache_write_tokens: (u) => u.cacheWriteTokens ?? 0,
  endpoint: (u) => u.endpoint ?? null,
  error_code: (u) => u.errorCode ?? null,
  error_message: (u) => u.errorMessage ?? null,
  duration_ms: (u) => u.durationMs ?? null,
  first_token_ms: (u) => u.firstTokenMs ?? null,
  session_id: (u) => u.sessionId ?? null,
} satisfies Record<keyof UsageRow, (usage: UsageRecord) => unknown>;

/** The usage_records columns in insert order. */
export const USAGE_COLUMNS = Object.keys(USAGE_VALUES) as ReadonlyArray<keyof UsageRow>;

const USAGE_GETTERS = Object.values(USAGE_VALUES) as ReadonlyArray<(usage: UsageRecord) => unknown>;

/** The values of one record in USAGE_COLUMNS order. */
export function usageValues(usage: UsageRecord): unknown[] {
  return USAGE_GETTERS.map((value) => value(usage));
}

/** A usage record as JSON (USAGE_COLUMNS → value): how PostgreSQL's functions and statements read rows in bulk. */
export function usageObjectOf(usage: UsageRecord): Record<string, unknown> {
  const values = usageValues(usage);
  return Object.fromEntries(USAGE_COLUMNS.map((column, i) => [column, values[i]]));
}

export function usageRecordOf(row: UsageRow): UsageRecord {
  const attempts = JSON.parse(row.attempts) as Array<{ provider: string; status: number; duration_ms: number }>;
  return {
    requestId: row.request_id,
    time: row.created_at,
    keyId: row.key_id,
    model: row.model,
    provider: row.provider,
    upstreamModel: row.upstream_model,
    status: row.status,
    inputTokens: row.input_tokens,
    cachedInputTokens: row.cached_input_tokens,
    outputTokens: row.output_tokens,
    reasoningTokens: row.reasoning_tokens,
    cost: row.cost,
    usageSource: row.usage_source,
    cacheWriteTokens: Number(row.cache_write_tokens),
    attempts: attempts.map((a) => ({ provider: a.provider, status: a.status, durationMs: a.duration_ms })),
    endpoint: row.endpoint,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    durationMs: row.duration_ms === null ? null : Number(row.duration_ms),
    firstTokenMs: row.first_token_ms === null ? null : Number(row.first_token_ms),
    sessionId: row.session_id ?? null,
  };
}

/**
 * The SQL both dialects share, given their placeholders (`?` or `$n`): the same statement text means the
 * same semantics, so the billing rules cannot drift apart between SQLite and PostgreSQL.
 */
export const SHARED_SQL = {
  /**
   * Admission, the key's half (docs/adr/0047-accounts.md): an active, unexpired key whose credit limit
   * (lifetime spend + its holds + this hold) and budget (spent in the period + its holds + this hold)
   * cover the hold; it also starts the period's spend counter afresh when a new period began. Returns
   * the key's account. Params: amount, key id, now, the period start of the key's budget, the effective
   * budget (NULL: none; PostgreSQL needs it cast).
   */
  admitKey: (amount: string, keyId: string, now: string, periodStart: string, budget: string) =>
    `UPDATE api_keys SET held = held + ${amount},
      budget_spent = CASE WHEN budget_period_start = ${periodStart} THEN budget_spent ELSE 0 END,
      budget_period_start = ${periodStart}
    WHERE id = ${keyId} AND status = 'active' AND (expires_at IS NULL OR expires_at > ${now})
      AND (credit_limit IS NULL OR spent + held + ${amount} <= credit_limit)
      AND (${budget} IS NULL OR CASE WHEN budget_period_start = ${periodStart} THEN budget_spent ELSE 0 END + held + ${amount} <= ${budget})
    RETURNING account_id`,
  /**
   * Admission, the account's half, in the same transaction: an active account whose available balance
   * and budget cover the hold. Params: amount, account id, the period start of the account's budget,
   * its budget (NULL: none).
   */
  admitAccount: (amount: string, accountId: string, periodStart: string, budget: string) =>
    `UPDATE accounts SET held = held + ${amount},
      budget_spent = CASE WHEN budget_period_start = ${periodStart} THEN budget_spent ELSE 0 END,
      budget_period_start = ${periodStart}
    WHERE id = ${accountId} AND status = 'active' AND balance - held >= ${amount}
      AND (${budget} IS NULL OR CASE WHEN budget_period_start = ${periodStart} THEN budget_spent ELSE 0 END + held + ${amount} <= ${budget})`,
  /**
   * A capture, the key's half: counted as its spend and in its budget period's; the hold amount released
   * with it (0 for a late capture) leaves its held. Returns the account. Params: cost, unheld, period start, key id.
   */
  chargeKey: (cost: string, unheld: string, periodStart: string, keyId: string) =>
    `UPDATE api_keys SET spent = spent + ${cost}, held = held - ${unheld},
      budget_spent = CASE WHEN budget_period_start = ${periodStart} THEN budget_spent + ${cost} ELSE ${cost} END,
      budget_period_start = ${periodStart}
    WHERE id = ${keyId} RETURNING account_id`,
  /** A capture, the account's half: charged from its balance. Params: cost, unheld, the account's period start, account id. */
  chargeAccount: (cost: string, unheld: string, periodStart: string, accountId: string) =>
    `UPDATE accounts SET balance = balance - ${cost}, spent = spent + ${cost}, held = held - ${unheld},
      budget_spent = CASE WHEN budget_period_start = ${periodStart} THEN budget_spent + ${cost} ELSE ${cost} END,
      budget_period_start = ${periodStart}
    WHERE id = ${accountId}`,
  /** One usage row per request; a second write of the same request is a no-op. Params: usageValues(). */
  insertUsage: (placeholders: readonly string[]) =>
    `INSERT INTO usage_records (${USAGE_COLUMNS.join(', ')}) VALUES (${placeholders.join(', ')}) ON CONFLICT (request_id) DO NOTHING`,
  /**
   * held and spent derived from a key's append-only entries alone (PostgreSQL's SUM of BIGINT is
   * NUMERIC, hence the casts), and balance, held and spent from an account's. Params: the id.
   */
  derivedKeyFigures: (keyId: string) => `SELECT
      CAST(COALESCE(SUM(CASE kind WHEN 'hold' THEN amount WHEN 'release' THEN -amount ELSE 0 END), 0) AS BIGINT) AS held,
      CAST(COALESCE(SUM(CASE kind WHEN 'capture' THEN amount ELSE 0 END), 0) AS BIGINT) AS spent
    FROM ledger_entries WHERE key_id = ${keyId}`,
  derivedAccountFigures: (accountId: string) => `SELECT
      CAST(COALESCE(SUM(CASE kind WHEN 'topup' THEN amount WHEN 'adjust' THEN amount WHEN 'capture' THEN -amount ELSE 0 END), 0) AS BIGINT) AS balance,
      CAST(COALESCE(SUM(CASE kind WHEN 'hold' THEN amount WHEN 'release' THEN -amount ELSE 0 END), 0) AS BIGINT) AS held,
      CAST(COALESCE(SUM(CASE kind WHEN 'capture' THEN amount ELSE 0 END), 0) AS BIGINT) AS spent
    FROM ledger_entries WHERE account_id = ${accountId}`,
};

/** No account budget: a ledger operation that names none. */
export const NO_BUDGET: BudgetWindow = Object.freeze({ limit: null, periodStart: 0 });

/** What admission reads back about a key and its account when it refused. */
export interface KeyAdmissionRow {
  held: number;
  spent: number;
  status: string;
  expires_at: number | null;
  budget_spent: number;
  budget_period_start: number;
  credit_limit: number | null;
  account_id: string;
}

export interface AccountAdmissionRow {
  balance: number;
  held: number;
  status: string;
  budget_spent: number;
  budget_period_start: number;
}

export const KEY_ADMISSION_COLUMNS = 'held, spent, status, expires_at, budget_spent, budget_period_start, credit_limit, account_id';
export const ACCOUNT_ADMISSION_COLUMNS = 'balance, held, status, budget_spent, budget_period_start';

/** Spent in the budget period that began at `periodStart`, plus the active holds (a key's or an account's). */
export function budgetUsedOf(row: Pick<KeyAdmissionRow, 'held' | 'budget_spent' | 'budget_period_start'>, periodStart: number): number {
  return (row.budget_period_start === periodStart ? row.budget_spent : 0) + row.held;
}

/** What the key could still hold: the account's available balance, within the key's credit limit. */
export function availableOf(key: Pick<KeyAdmissionRow, 'held' | 'spent' | 'credit_limit'>, account: Pick<AccountAdmissionRow, 'balance' | 'held'>): number {
  const inAccount = account.balance - account.held;
  return key.credit_limit === null ? inAccount : Math.min(inAccount, key.credit_limit - key.spent - key.held);
}

/** The least room for `covered` more among the four caps (a late capture's ceiling); may be negative. */
export function roomOf(key: KeyAdmissionRow, account: AccountAdmissionRow, budget: BudgetWindow, accountBudget: BudgetWindow = NO_BUDGET): number {
  const keyBudget = budget.limit === null ? Infinity : budget.limit - budgetUsedOf(key, budget.periodStart);
  const accountBudgetRoom = accountBudget.limit === null ? Infinity : accountBudget.limit - budgetUsedOf(account, accountBudget.periodStart);
  return Math.min(availableOf(key, account), keyBudget, accountBudgetRoom);
}

/**
 * Why admission refused `amount`, from the key's and its account's rows as they were then: an unknown,
 * revoked or expired key; a suspended account; else the key's budget, the account's budget (waiting for
 * the next period is the remedy, topping up is not), the key's credit limit, and last the balance.
 */
export function refusalOf(
  key: KeyAdmissionRow | undefined,
  account: AccountAdmissionRow | undefined,
  amount: number,
  now: number,
  budget: BudgetWindow,
  accountBudget: BudgetWindow = NO_BUDGET,
): Refusal {
  if (!key || !account) return { admitted: false, reason: 'inactive', available: 0, budgetUsed: 0, keyActive: false };
  const available = availableOf(key, account);
  const keyUsed = budgetUsedOf(key, budget.periodStart);
  const accountUsed = budgetUsedOf(account, accountBudget.periodStart);
  const active = key.status === 'active' && (key.expires_at === null || key.expires_at > now);
  const refusal = (reason: RefusalReason, budgetUsed = keyUsed): Refusal => ({ admitted: false, reason, available, budgetUsed, keyActive: active });
  if (!active) return refusal('inactive');
  if (account.status !== 'active') return refusal('suspended');
  if (budget.limit !== null && keyUsed + amount > budget.limit) return refusal('budget');
  if (accountBudget.limit !== null && accountUsed + amount > accountBudget.limit) return refusal('account_budget', accountUsed);
  if (key.credit_limit !== null && key.spent + key.held + amount > key.credit_limit) return refusal('credit_limit');
  return refusal('balance');
}
