// Usage rows and their totals, for every face (CLI `usage`, the admin API and its CSV export, the
// key holder's own usage): filters read and checked here, rows newest first a page at a time.
import { nanoToUsd } from '../billing/money.js';
import { GatewayError } from '../errors.js';
import type { SequencedUsage, Store, UsageFilter, UsageGrouping, UsageRecord, UsageTotals } from '../storage/types.js';
import { decodeCursor, listPage, pageSize, walkPages, type ListPage } from './page.js';

/** Filters as they arrive (query strings, flags); every one optional. */
export interface UsageFilterInput {
  readonly key_id?: unknown;
  readonly model?: unknown;
  readonly provider?: unknown;
  readonly status?: unknown;
  readonly since?: unknown;
  readonly until?: unknown;
}

export interface UsageListInput extends UsageFilterInput {
  readonly limit?: unknown;
  readonly after?: unknown;
}

export const USAGE_GROUPINGS: readonly UsageGrouping[] = ['key', 'model', 'provider', 'day', 'hour'];

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

export function usageFilterOf(input: UsageFilterInput): UsageFilter {
  const status = input.status === undefined ? undefined : typeof input.status === 'string' && /^\d{3}$/.test(input.status) ? Number(input.status) : input.status;
  if (status !== undefined && (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599)) {
    invalid('status', 'expected an HTTP status such as 200 or 502');
  }
  const filter = {
    keyId: text('key_id', input.key_id),
    model: text('model', input.model),
    provider: text('provider', input.provider),
    status,
    since: time('since', input.since),
    until: time('until', input.until),
  };
  return Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)) as UsageFilter;
}

/** A usage row as JSON (product.md §2's shape). */
export function usageJson(row: UsageRecord): Record<string, unknown> {
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
  };
}

const isSeq = (p: unknown): p is number => Number.isSafeInteger(p) && (p as number) > 0;

/** One page of usage rows, newest first, as records (the CSV export renders them its own way). */
export async function usagePage(store: Store, input: UsageListInput): Promise<ListPage<UsageRecord>> {
  const limit = pageSize(input.limit);
  const filter = usageFilterOf(input);
  const beforeSeq = input.after === undefined ? undefined : decodeCursor('usage', input.after, isSeq);
  const rows = await store.usage.page({ ...filter, ...(beforeSeq !== undefined ? { beforeSeq } : {}), limit: limit + 1 });
  return listPage('usage', rows, limit, (r: SequencedUsage) => r.record, (r) => r.seq);
}

export async function listUsage(store: Store, input: UsageListInput): Promise<ListPage<Record<string, unknown>>> {
  const page = await usagePage(store, input);
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

function totalsJson(groupBy: UsageGrouping, totals: UsageTotals): Record<string, unknown> {
  const group = groupBy === 'day' || groupBy === 'hour' ? new Date(Number(totals.group)).toISOString() : totals.group;
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
 * Requests, errors, tokens by class and cost per key, model, provider, UTC day or UTC hour. Every group
 * comes in one answer (a summary is as long as its groups, not its rows), in the list shape.
 */
export async function summarizeUsage(
  store: Store,
  input: UsageFilterInput & { readonly group_by?: unknown },
  allowed: readonly UsageGrouping[] = USAGE_GROUPINGS,
): Promise<ListPage<Record<string, unknown>> & { group_by: UsageGrouping }> {
  const groupBy = groupingOf(input.group_by);
  if (!allowed.includes(groupBy)) invalid('group_by', `expected one of ${allowed.join(', ')}`);
  const totals = await store.usage.summarize(usageFilterOf(input), groupBy);
  return { object: 'list', group_by: groupBy, data: totals.map((t) => totalsJson(groupBy, t)), has_more: false, next_cursor: null };
}
