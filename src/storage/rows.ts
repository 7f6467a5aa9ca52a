// Row shapes shared by every dialect: the same columns in SQLite and PostgreSQL (money and times as
// integers; the allow-list and the attempts as JSON text), and their mapping to the storage records.
import type { BudgetPeriod } from '../billing/budget-period.js';
import type { AllowedModels, Attempt, BudgetWindow, KeyLimits, KeyMetadata, KeyRecord, LimitsPatch, Refusal, UsageEndpoint, UsageRecord, UsageSource } from './types.js';

export interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  balance: number;
  held: number;
  spent: number;
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

export const KEY_COLUMNS =
  'id, name, prefix, balance, held, spent, allowed_models, status, created_at, rpm, tpm, max_concurrent, budget, budget_period, expires_at, budget_spent, budget_period_start, metadata, clamp_max_tokens';

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
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    balance: row.balance,
    held: row.held,
    spent: row.spent,
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
   * Admission: the one conditional UPDATE — an active, unexpired key whose available balance covers the
   * hold and whose budget (spent in the period + active holds + this hold) does too. It also starts the
   * period's spend counter afresh when a new period began. Params: amount, key id, now, the period start
   * of the key's budget, the effective budget (NULL: none; PostgreSQL needs it cast).
   */
  admit: (amount: string, keyId: string, now: string, periodStart: string, budget: string) =>
    `UPDATE api_keys SET held = held + ${amount},
      budget_spent = CASE WHEN budget_period_start = ${periodStart} THEN budget_spent ELSE 0 END,
      budget_period_start = ${periodStart}
    WHERE id = ${keyId} AND status = 'active' AND (expires_at IS NULL OR expires_at > ${now})
      AND balance - held >= ${amount}
      AND (${budget} IS NULL OR CASE WHEN budget_period_start = ${periodStart} THEN budget_spent ELSE 0 END + held + ${amount} <= ${budget})`,
  /**
   * A capture's money: charged from the balance, counted as spent, and in the budget period's spend.
   * Params: cost, the hold amount released with it (0 for a late capture), the period start, key id.
   */
  charge: (cost: string, unheld: string, periodStart: string, keyId: string) =>
    `UPDATE api_keys SET balance = balance - ${cost}, spent = spent + ${cost}, held = held - ${unheld},
      budget_spent = CASE WHEN budget_period_start = ${periodStart} THEN budget_spent + ${cost} ELSE ${cost} END,
      budget_period_start = ${periodStart}
    WHERE id = ${keyId}`,
  /** One usage row per request; a second write of the same request is a no-op. Params: usageValues(). */
  insertUsage: (placeholders: readonly string[]) =>
    `INSERT INTO usage_records (${USAGE_COLUMNS.join(', ')}) VALUES (${placeholders.join(', ')}) ON CONFLICT (request_id) DO NOTHING`,
  /** balance, held and spent derived from the append-only entries alone (PostgreSQL's SUM of BIGINT is NUMERIC, hence the casts). Params: key id. */
  derivedFigures: (keyId: string) => `SELECT
      CAST(COALESCE(SUM(CASE kind WHEN 'topup' THEN amount WHEN 'adjust' THEN amount WHEN 'capture' THEN -amount ELSE 0 END), 0) AS BIGINT) AS balance,
      CAST(COALESCE(SUM(CASE kind WHEN 'hold' THEN amount WHEN 'release' THEN -amount ELSE 0 END), 0) AS BIGINT) AS held,
      CAST(COALESCE(SUM(CASE kind WHEN 'capture' THEN amount ELSE 0 END), 0) AS BIGINT) AS spent
    FROM ledger_entries WHERE key_id = ${keyId}`,
};

/** What admission reads back about a key when it refused. */
export interface KeyAdmissionRow {
  balance: number;
  held: number;
  status: string;
  expires_at: number | null;
  budget_spent: number;
  budget_period_start: number;
}

export const KEY_ADMISSION_COLUMNS = 'balance, held, status, expires_at, budget_spent, budget_period_start';

/** Spent in the budget period that began at `periodStart`, plus the active holds. */
export function budgetUsedOf(row: Pick<KeyAdmissionRow, 'held' | 'budget_spent' | 'budget_period_start'>, periodStart: number): number {
  return (row.budget_period_start === periodStart ? row.budget_spent : 0) + row.held;
}

/**
 * Why admission refused `amount`, from the key's row as it was then: an unknown, revoked or expired key;
 * else the budget when it does not cover the hold (waiting for the next period is the remedy, topping up
 * is not); else the balance.
 */
export function refusalOf(row: KeyAdmissionRow | undefined, amount: number, now: number, budget: BudgetWindow): Refusal {
  if (!row) return { admitted: false, reason: 'inactive', available: 0, budgetUsed: 0, keyActive: false };
  const available = row.balance - row.held;
  const budgetUsed = budgetUsedOf(row, budget.periodStart);
  const active = row.status === 'active' && (row.expires_at === null || row.expires_at > now);
  const reason = !active ? 'inactive' : budget.limit !== null && budgetUsed + amount > budget.limit ? 'budget' : 'balance';
  return { admitted: false, reason, available, budgetUsed, keyActive: active };
}
