// Usage rows and their totals, for every face (CLI `usage`, the admin API and its CSV export, the
// key holder's own usage): filters read and checked here, rows newest first a page at a time.
import { nanoToUsd } from '../billing/money.js';
import { GatewayError } from '../errors.js';
import {
  USAGE_ENDPOINTS,
  type SequencedUsage,
  type StatusFilter,
  type Store,
  type UnauthenticatedGrouping,
  type UsageFilter,
  type UsageGrouping,
  type UsageRecord,
  type UsageTotals,
} from '../storage/types.js';
import type { UnauthenticatedJson, UsageJson, UsageSummaryJson, UsageTotalsJson } from './json-types.js';
import { decodeCursor, listPage, pageSize, walkPages, type ListPage } from './page.js';

/** Filters as they arrive (query strings, flags); every one optional. */
export interface UsageFilterInput {
  readonly key_id?: unknown;
  /** The rows of every key of this account (docs/adr/0047-accounts.md). */
  readonly account_id?: unknown;
  readonly model?: unknown;
  readonly provider?: unknown;
  readonly status?: unknown;
  readonly endpoint?: unknown;
  readonly session_id?: unknown;
  readonly request_id?: unknown;
  readonly since?: unknown;
  readonly until?: unknown;
}

export interface UsageListInput extends UsageFilterInput {
  readonly limit?: unknown;
  readonly after?: unknown;
}

export const USAGE_GROUPINGS: readonly UsageGrouping[] = ['key', 'account', 'model', 'provider', 'endpoint', 'session', 'day', 'hour'];

function invalid(field: string, message: string): never {
  throw new GatewayError('invalid_request', { param: field, message: `Invalid '${field}': ${message}` });
}

function text(field: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') invalid(field, 'expected a non-empty string');
  return value;
}

/** A date (UTC midnight) or a date-time with Z or an offset: a time without a zone would be read in the server's zone. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/i;

function time(field: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const at = typeof value === 'string' && ISO_TIME.test(value.trim()) ? Date.parse(value.trim()) : NaN;
  if (!Number.isFinite(at)) invalid(field, `expected an ISO 8601 date or time with a zone (2026-11-01, 2026-11-01T09:00:00Z), got ${JSON.stringify(value)}`);
  return at;
}

const STATUS_CLASSES: ReadonlySet<string> = new Set(['2xx', '4xx', '5xx', 'error']);
const ENDPOINTS: ReadonlySet<string> = new Set<string>(USAGE_ENDPOINTS);

/** One HTTP status (`402`), a class (`2xx`, `4xx`, `5xx`) or `error` (every status from 400). */
function statusFilterOf(value: unknown): StatusFilter | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && STATUS_CLASSES.has(value)) return value as StatusFilter;
  const status = typeof value === 'string' && /^\d{3}$/.test(value) ? Number(value) : value;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) {
    invalid('status', 'expected an HTTP status such as 200 or 502, or one of 2xx, 4xx, 5xx, error');
  }
  return status;
}

export function usageFilterOf(input: UsageFilterInput): UsageFilter {
  const endpoint = text('endpoint', input.endpoint);
  if (endpoint !== undefined && !ENDPOINTS.has(endpoint)) invalid('endpoint', `expected one of ${[...ENDPOINTS].join(', ')}`);
  const filter = {
    keyId: text('key_id', input.key_id),
    accountId: text('account_id', input.account_id),
    model: text('model', input.model),
    provider: text('provider', input.provider),
    status: statusFilterOf(input.status),
    endpoint,
    sessionId: text('session_id', input.session_id),
    requestId: text('request_id', input.request_id),
    since: time('since', input.since),
    until: time('until', input.until),
  };
  return Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)) as UsageFilter;
}

/** A usage row as JSON (product.md §2's shape). */
export function usageJson(row: UsageRecord): UsageJson {
  return {
    request_id: row.requestId,
    time: new Date(row.time).toISOString(),
    key_id: row.keyId,
    model: row.model,
    provider: row.provider,
    upstream_model: row.upstreamModel,
    status: row.status,
    input_tokens: row.inputTokens,
    cached_input_tokens: row.cachedInputTokens,
    cache_write_tokens: row.cacheWriteTokens ?? 0,
    output_tokens: row.outputTokens,
    reasoning_tokens: row.reasoningTokens,
    cost: nanoToUsd(row.cost),
    usage_source: row.usageSource,
    attempts: row.attempts.map((a) => ({ provider: a.provider, status: a.status, duration_ms: a.durationMs })),
    endpoint: row.endpoint ?? null,
    session_id: row.sessionId ?? null,
    error_code: row.errorCode ?? null,
    error_message: row.errorMessage ?? null,
    duration_ms: row.durationMs ?? null,
    first_token_ms: row.firstTokenMs ?? null,
  };
}

const isSeq = (p: unknown): p is number => Number.isSafeInteger(p) && (p as number) > 0;

/**
 * One page of usage rows, newest first, as records (the CSV export renders them its own way). `scope`:
 * what the caller may see at most, whatever the input asks (an account token's holder: its account).
 */
export async function usagePage(store: Store, input: UsageListInput, scope: UsageFilter = {}): Promise<ListPage<UsageRecord>> {
  const limit = pageSize(input.limit);
  const filter = { ...usageFilterOf(input), ...scope };
  const beforeSeq = input.after === undefined ? undefined : decodeCursor('usage', input.after, isSeq);
  const rows = await store.usage.page({ ...filter, ...(beforeSeq !== undefined ? { beforeSeq } : {}), limit: limit + 1 });
  return listPage('usage', rows, limit, (r: SequencedUsage) => r.record, (r) => r.seq);
}

export async function listUsage(store: Store, input: UsageListInput, scope: UsageFilter = {}): Promise<ListPage<UsageJson>> {
  const page = await usagePage(store, input, scope);
  return { ...page, data: page.data.map(usageJson) };
}

/** Every matching row, newest first, fetched a page at a time (an export never holds them all). */
export async function* walkUsage(store: Store, input: UsageFilterInput, batch = 500): AsyncGenerator<UsageRecord> {
  usageFilterOf(input);
  const page = (after?: string) => usagePage(store, { ...input, limit: batch, ...(after ? { after } : {}) });
  yield* walkPages(await page(), page);
}

function groupingOf(value: unknown): UsageGrouping {
  if (typeof value === 'string' && (USAGE_GROUPINGS as readonly string[]).includes(value)) return value as UsageGrouping;
  return invalid('group_by', `expected one of ${USAGE_GROUPINGS.join(', ')}`);
}

function totalsJson(groupBy: UsageGrouping, totals: UsageTotals): UsageTotalsJson {
  // A time group is the period's start (epoch ms); a key, account, model, provider, client API or session group is
  // that text column's value, null for rows without one.
  const group = groupBy === 'day' || groupBy === 'hour' ? new Date(Number(totals.group)).toISOString() : (totals.group as string | null);
  return {
    group,
    requests: totals.requests,
    errors: totals.errors,
    input_tokens: totals.inputTokens,
    cached_input_tokens: totals.cachedInputTokens,
    output_tokens: totals.outputTokens,
    reasoning_tokens: totals.reasoningTokens,
    cost: nanoToUsd(totals.cost),
  };
}

/**
 * Requests, errors, tokens by class and cost per key, model, provider, client API (`endpoint`), agent
 * session (`session`: what one Claude Code or Codex session cost), UTC day or UTC hour. Every group
 * comes in one answer (a summary is as long as its groups, not its rows), in the list shape.
 */
export async function summarizeUsage(
  store: Store,
  input: UsageFilterInput & { readonly group_by?: unknown },
  allowed: readonly UsageGrouping[] = USAGE_GROUPINGS,
  scope: UsageFilter = {},
): Promise<UsageSummaryJson> {
  const groupBy = groupingOf(input.group_by);
  if (!allowed.includes(groupBy)) invalid('group_by', `expected one of ${allowed.join(', ')}`);
  const totals = await store.usage.summarize({ ...usageFilterOf(input), ...scope }, groupBy);
  return { object: 'list', group_by: groupBy, data: totals.map((t) => totalsJson(groupBy, t)), has_more: false, next_cursor: null };
}

const UNAUTHENTICATED_GROUPINGS: readonly UnauthenticatedGrouping[] = ['minute', 'hour', 'day'];

/**
 * Requests refused for want of a valid key (401), counted per minute — never one row each — and summed
 * per minute, hour or UTC day (default hour), oldest first; `total` is their sum.
 */
export async function unauthenticatedRequests(
  store: Store,
  input: { readonly since?: unknown; readonly until?: unknown; readonly group_by?: unknown },
): Promise<UnauthenticatedJson> {
  const groupBy = (input.group_by ?? 'hour') as UnauthenticatedGrouping;
  if (!UNAUTHENTICATED_GROUPINGS.includes(groupBy)) invalid('group_by', `expected one of ${UNAUTHENTICATED_GROUPINGS.join(', ')}`);
  const since = time('since', input.since);
  const until = time('until', input.until);
  const counts = await store.usage.unauthenticated({ ...(since !== undefined ? { since } : {}), ...(until !== undefined ? { until } : {}) }, groupBy);
  const data = counts.map((c) => ({ time: new Date(c.minute).toISOString(), requests: c.requests }));
  return { object: 'list', group_by: groupBy, data, total: data.reduce((sum, c) => sum + c.requests, 0) };
}
