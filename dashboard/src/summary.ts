// Usage summaries (GET .../usage/summary) made ready for the page: the group value of a row, and time
// buckets made dense (an hour with no traffic is a zero on the chart, not a gap the line jumps over).
import type { UsageTotalsJson } from './types.js';

export type Period = 'hour' | 'day';

/** The range a chart covers: the last 24 hours by hour, or the last 30 days by day. */
export const RANGES: Record<Period, { buckets: number; seconds: number; label: string }> = {
  hour: { buckets: 24, seconds: 3600, label: 'Last 24 hours, by hour' },
  day: { buckets: 30, seconds: 86_400, label: 'Last 30 days, by day' },
};

/** The first bucket's start (UTC-aligned, epoch seconds) for a range ending in the bucket holding `now`. */
export function rangeStart(period: Period, now = Date.now()): number {
  const { buckets, seconds } = RANGES[period];
  const current = Math.floor(now / 1000 / seconds) * seconds;
  return current - (buckets - 1) * seconds;
}

/** The row's group (key id, model, provider or bucket time); '' for the rows without one. */
export function groupOf(row: UsageTotalsJson): string {
  return row.group ?? '';
}

/** A bucket label (ISO date, ISO hour, or epoch) as epoch seconds; NaN when unreadable. */
export function bucketSeconds(value: string): number {
  if (/^\d+$/.test(value)) {
    const n = Number(value);
    return n > 1e11 ? Math.floor(n / 1000) : n;
  }
  let iso = value;
  if (/^\d{4}-\d{2}-\d{2}T\d{2}$/.test(iso)) iso += ':00:00Z';
  else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(iso)) iso += 'Z';
  return Math.floor(Date.parse(iso) / 1000);
}

export interface TimeSeries {
  times: number[];
  requests: number[];
  cost: number[];
  tokens: number[];
  /** Failed requests (status 400 and up). */
  errors: number[];
  /** Failed requests / requests, in percent; null in a bucket without requests. */
  errorRate: (number | null)[];
}

/** Dense series over the range: one point per bucket, zero where the summary has no row. */
export function timeSeries(rows: readonly UsageTotalsJson[], period: Period, now = Date.now()): TimeSeries {
  const { buckets, seconds } = RANGES[period];
  const start = rangeStart(period, now);
  const series: TimeSeries = { times: [], requests: [], cost: [], tokens: [], errors: [], errorRate: [] };
  const byBucket = new Map<number, UsageTotalsJson>();
  for (const row of rows) byBucket.set(Math.floor(bucketSeconds(groupOf(row)) / seconds) * seconds, row);
  for (let i = 0; i < buckets; i++) {
    const at = start + i * seconds;
    const row = byBucket.get(at);
    series.times.push(at);
    series.requests.push(row?.requests ?? 0);
    series.cost.push(row?.cost ?? 0);
    series.tokens.push(row ? totalTokens(row) : 0);
    series.errors.push(row?.errors ?? 0);
    series.errorRate.push(row && row.requests > 0 ? (100 * row.errors) / row.requests : null);
  }
  return series;
}

export function totalTokens(row: UsageTotalsJson): number {
  return row.input_tokens + row.output_tokens;
}

/** Sums a list of summary rows into one. */
export function totals(rows: readonly UsageTotalsJson[]): { requests: number; cost: number; tokens: number; errors: number } {
  let requests = 0;
  let tokens = 0;
  let errors = 0;
  // Money: summed in nano-dollars (integers), so the total is exact.
  let nano = 0;
  for (const row of rows) {
    requests += row.requests;
    tokens += totalTokens(row);
    errors += row.errors;
    nano += Math.round(row.cost * 1e9);
  }
  return { requests, tokens, errors, cost: nano / 1e9 };
}
