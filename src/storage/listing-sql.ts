// The SQL of the admin listings, shared by both dialects (given their placeholders, `?` or `$n`): keys
// filtered and paged in creation order, a key's ledger entries and usage rows newest first, usage totals
// by group, and the multi-field key update. Pages are keyset cursors on an immutable, unique order, so a
// walk sees each row at most once however many rows arrive meanwhile (docs/adr/0016-admin-api.md).
import { KEY_FROM, limitsAssignments, serialiseAllowList } from './rows.js';
import type {
  AccountChange,
  AccountPageQuery,
  EntryPageQuery,
  KeyChange,
  KeyPageQuery,
  LedgerEntry,
  LedgerEntryKind,
  StatusFilter,
  UnauthenticatedGrouping,
  UsageFilter,
  UsageGrouping,
  UsagePageQuery,
  UsageTotals,
} from './types.js';

/** Numbered placeholders: `?` for SQLite, `$n` for PostgreSQL. */
export type Placeholder = (index: number) => string;

export interface Statement {
  readonly sql: string;
  readonly values: unknown[];
}

class Conditions {
  readonly parts: string[] = [];
  readonly values: unknown[] = [];
  constructor(private readonly placeholder: Placeholder) {}

  /** A value's placeholder (SQLite's are positional: a value used twice is pushed twice). */
  push(value: unknown): string {
    this.values.push(value);
    return this.placeholder(this.values.length);
  }

  add(template: (p: string) => string, value: unknown): void {
    this.parts.push(template(this.push(value)));
  }

  get where(): string {
    return this.parts.length === 0 ? '' : `WHERE ${this.parts.join(' AND ')}`;
  }

  next(): string {
    return this.placeholder(this.values.length + 1);
  }
}

/** Escapes LIKE's wildcards so a name prefix matches literally. */
function likePrefix(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Keys (with their accounts: KEY_COLUMNS) filtered and paged. */
export function keyPageSql(columns: string, query: KeyPageQuery, placeholder: Placeholder): Statement {
  const c = new Conditions(placeholder);
  if (query.status) c.add((p) => `k.status = ${p}`, query.status);
  if (query.accountId) c.add((p) => `k.account_id = ${p}`, query.accountId);
  if (query.namePrefix) c.add((p) => `k.name LIKE ${p} ESCAPE '\\'`, likePrefix(query.namePrefix));
  if (query.after) {
    const { createdAt, id } = query.after;
    c.parts.push(`(k.created_at > ${c.push(createdAt)} OR (k.created_at = ${c.push(createdAt)} AND k.id > ${c.push(id)}))`);
  }
  const limit = c.next();
  return { sql: `SELECT ${columns} FROM ${KEY_FROM} ${c.where} ORDER BY k.created_at, k.id LIMIT ${limit}`, values: [...c.values, query.limit] };
}

/** Accounts filtered and paged in creation order; personal accounts only when asked. */
export function accountPageSql(columns: string, query: AccountPageQuery, placeholder: Placeholder): Statement {
  const c = new Conditions(placeholder);
  if (query.status) c.add((p) => `status = ${p}`, query.status);
  if (!query.includePersonal) c.parts.push('personal = 0');
  if (query.namePrefix) c.add((p) => `name LIKE ${p} ESCAPE '\\'`, likePrefix(query.namePrefix));
  if (query.after) {
    const { createdAt, id } = query.after;
    c.parts.push(`(created_at > ${c.push(createdAt)} OR (created_at = ${c.push(createdAt)} AND id > ${c.push(id)}))`);
  }
  const limit = c.next();
  return { sql: `SELECT ${columns} FROM accounts ${c.where} ORDER BY created_at, id LIMIT ${limit}`, values: [...c.values, query.limit] };
}

/** The assignments of an AccountChange (null when nothing changes); the account id is the last value. */
export function accountUpdateSql(id: string, change: AccountChange, placeholder: Placeholder): Statement | null {
  const parts: string[] = [];
  const values: unknown[] = [];
  const set = (column: string, value: unknown) => {
    values.push(value);
    parts.push(`${column} = ${placeholder(values.length)}`);
  };
  if (change.name !== undefined) set('name', change.name);
  if (change.status !== undefined) set('status', change.status);
  if (change.budget !== undefined) set('budget', change.budget);
  if (change.budgetPeriod !== undefined) set('budget_period', change.budgetPeriod);
  if (change.metadata !== undefined) set('metadata', JSON.stringify(change.metadata));
  if (change.allowedModels !== undefined) set('allowed_models', serialiseAllowList(change.allowedModels));
  if (parts.length === 0) return null;
  values.push(id);
  return { sql: `UPDATE accounts SET ${parts.join(', ')} WHERE id = ${placeholder(values.length)}`, values };
}

export interface EntryRow {
  id: number;
  account_id: string;
  key_id: string | null;
  request_id: string;
  kind: LedgerEntryKind;
  amount: number;
  created_at: number;
  note: string | null;
}

export function entryPageSql(query: EntryPageQuery, placeholder: Placeholder): Statement {
  const c = new Conditions(placeholder);
  if (query.keyId !== undefined) c.add((p) => `key_id = ${p}`, query.keyId);
  if (query.accountId !== undefined) c.add((p) => `account_id = ${p}`, query.accountId);
  if (query.keyId === undefined && query.accountId === undefined) throw new Error('entryPageSql: a key or an account is required');
  if (query.beforeId !== undefined) c.add((p) => `id < ${p}`, query.beforeId);
  const limit = c.next();
  return {
    sql: `SELECT id, account_id, key_id, request_id, kind, amount, created_at, note FROM ledger_entries ${c.where} ORDER BY id DESC LIMIT ${limit}`,
    values: [...c.values, query.limit],
  };
}

export function ledgerEntryOf(row: EntryRow): LedgerEntry {
  return { id: row.id, accountId: row.account_id, keyId: row.key_id, requestId: row.request_id, kind: row.kind, amount: row.amount, createdAt: row.created_at, note: row.note };
}

function usageConditions(filter: UsageFilter, placeholder: Placeholder): Conditions {
  const c = new Conditions(placeholder);
  if (filter.keyId !== undefined) c.add((p) => `key_id = ${p}`, filter.keyId);
  if (filter.accountId !== undefined) c.add((p) => `key_id IN (SELECT id FROM api_keys WHERE account_id = ${p})`, filter.accountId);
  if (filter.model !== undefined) c.add((p) => `model = ${p}`, filter.model);
  if (filter.provider !== undefined) c.add((p) => `provider = ${p}`, filter.provider);
  if (filter.status !== undefined) addStatusCondition(c, filter.status);
  if (filter.endpoint !== undefined) c.add((p) => `endpoint = ${p}`, filter.endpoint);
  if (filter.sessionId !== undefined) c.add((p) => `session_id = ${p}`, filter.sessionId);
  if (filter.requestId !== undefined) c.add((p) => `request_id = ${p}`, filter.requestId);
  if (filter.since !== undefined) c.add((p) => `created_at >= ${p}`, filter.since);
  if (filter.until !== undefined) c.add((p) => `created_at < ${p}`, filter.until);
  return c;
}

/** The status ranges of the classes a status filter may name (from inclusive, to exclusive). */
const STATUS_CLASSES = { '2xx': [200, 300], '4xx': [400, 500], '5xx': [500, 600], error: [400, 600] } as const;

function addStatusCondition(c: Conditions, status: StatusFilter): void {
  if (typeof status === 'number') return c.add((p) => `status = ${p}`, status);
  const [from, to] = STATUS_CLASSES[status];
  c.parts.push(`status >= ${c.push(from)} AND status < ${c.push(to)}`);
}

/** `seq`: the dialect's insertion-order column (SQLite's rowid, PostgreSQL's identity column). */
export function usagePageSql(query: UsagePageQuery, seq: string, placeholder: Placeholder): Statement {
  const c = usageConditions(query, placeholder);
  if (query.beforeSeq !== undefined) c.add((p) => `${seq} < ${p}`, query.beforeSeq);
  const limit = c.next();
  const columns = seq === 'seq' ? '*' : `*, ${seq} AS seq`;
  return { sql: `SELECT ${columns} FROM usage_records ${c.where} ORDER BY ${seq} DESC LIMIT ${limit}`, values: [...c.values, query.limit] };
}

const HOUR_MS = 3_600_000;
const GROUP_EXPRESSIONS: Record<UsageGrouping, string> = {
  key: 'key_id',
  // A key never changes account, so its rows' account is its current one.
  account: '(SELECT account_id FROM api_keys WHERE api_keys.id = usage_records.key_id)',
  model: 'model',
  provider: 'provider',
  endpoint: 'endpoint',
  session: 'session_id',
  day: `(created_at / ${24 * HOUR_MS}) * ${24 * HOUR_MS}`,
  hour: `(created_at / ${HOUR_MS}) * ${HOUR_MS}`,
};

export interface TotalsRow {
  grp: string | number | null;
  requests: number;
  errors: number;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cost: number;
}

/** Totals per group: periods in time order, the others by cost (the biggest spenders first). Sums are cast: PostgreSQL's SUM of BIGINT is NUMERIC. */
export function usageSummarySql(filter: UsageFilter, groupBy: UsageGrouping, placeholder: Placeholder): Statement {
  const c = usageConditions(filter, placeholder);
  const group = GROUP_EXPRESSIONS[groupBy];
  const order = groupBy === 'day' || groupBy === 'hour' ? 'grp' : 'cost DESC, grp';
  const sum = (column: string) => `CAST(SUM(${column}) AS BIGINT)`;
  return {
    sql: `SELECT ${group} AS grp, COUNT(*) AS requests, ${sum('CASE WHEN status >= 400 THEN 1 ELSE 0 END')} AS errors,
        ${sum('input_tokens')} AS input_tokens, ${sum('cached_input_tokens')} AS cached_input_tokens,
        ${sum('output_tokens')} AS output_tokens, ${sum('reasoning_tokens')} AS reasoning_tokens, ${sum('cost')} AS cost
      FROM usage_records ${c.where} GROUP BY ${group} ORDER BY ${order}`,
    values: c.values,
  };
}

const MINUTE_MS = 60_000;
const UNAUTHENTICATED_BUCKETS: Record<UnauthenticatedGrouping, number> = { minute: MINUTE_MS, hour: HOUR_MS, day: 24 * HOUR_MS };

/** The per-minute counts of requests without a valid key, summed per minute, hour or UTC day, oldest first. */
export function unauthenticatedSql(range: { readonly since?: number; readonly until?: number }, groupBy: UnauthenticatedGrouping, placeholder: Placeholder): Statement {
  const c = new Conditions(placeholder);
  if (range.since !== undefined) c.add((p) => `minute >= ${p}`, range.since);
  if (range.until !== undefined) c.add((p) => `minute < ${p}`, range.until);
  const size = UNAUTHENTICATED_BUCKETS[groupBy];
  const bucket = `(minute / ${size}) * ${size}`;
  return {
    sql: `SELECT ${bucket} AS minute, CAST(SUM(requests) AS BIGINT) AS requests FROM unauthenticated_requests ${c.where} GROUP BY ${bucket} ORDER BY 1`,
    values: c.values,
  };
}

/** Adds to a minute's count (both dialects share the upsert's syntax). */
export function countUnauthenticatedSql(placeholder: Placeholder): string {
  return `INSERT INTO unauthenticated_requests (minute, requests) VALUES (${placeholder(1)}, ${placeholder(2)})
    ON CONFLICT (minute) DO UPDATE SET requests = unauthenticated_requests.requests + excluded.requests`;
}

export function usageTotalsOf(row: TotalsRow): UsageTotals {
  return {
    group: row.grp,
    requests: Number(row.requests),
    errors: Number(row.errors),
    inputTokens: Number(row.input_tokens),
    cachedInputTokens: Number(row.cached_input_tokens),
    outputTokens: Number(row.output_tokens),
    reasoningTokens: Number(row.reasoning_tokens),
    cost: Number(row.cost),
  };
}

/** The assignments of a KeyChange (null when nothing changes); the key id is the last value. */
export function keyUpdateSql(id: string, change: KeyChange, placeholder: Placeholder): Statement | null {
  const parts: string[] = [];
  const values: unknown[] = [];
  const set = (column: string, value: unknown) => {
    values.push(value);
    parts.push(`${column} = ${placeholder(values.length)}`);
  };
  if (change.name !== undefined) set('name', change.name);
  if (change.allowedModels !== undefined) set('allowed_models', serialiseAllowList(change.allowedModels));
  if (change.metadata !== undefined) set('metadata', JSON.stringify(change.metadata));
  const before = values.length;
  const limits = limitsAssignments(change, (i) => placeholder(before + i));
  if (limits.sql) {
    parts.push(limits.sql);
    values.push(...limits.values);
  }
  if (parts.length === 0) return null;
  values.push(id);
  return { sql: `UPDATE api_keys SET ${parts.join(', ')} WHERE id = ${placeholder(values.length)}`, values };
}
