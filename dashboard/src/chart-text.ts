// What a chart's legend says, in words: the range and its total while nothing is pointed at ("Spend per
// hour over the last 24 hours: $1.23 in all"), else the bucket pointed at ("14:00–15:00: $0.12 over 9
// requests"). uPlot's own legend ("Time: --  Spend: —") names series; an operator wants the figure.
import { count, usd } from './format.js';
import type { Period, TimeSeries } from './summary.js';

export interface ChartText {
  /** The sentence while no bucket is pointed at. */
  readonly idle: string;
  /** The sentence for the bucket at this index. */
  at(index: number): string;
}

/** How times read; the viewer's locale and zone unless told (tests pin them). */
export interface LabelOptions {
  readonly locale?: string;
  readonly timeZone?: string;
}

const RANGE_WORDS: Record<Period, string> = {
  hour: 'per hour over the last 24 hours',
  day: 'per day over the last 30 days',
};

/**
 * A bucket in words: an hour as "14:00–15:00" in the viewer's zone; a day as "Tue, Nov 25", the UTC day
 * the bucket is (day buckets are UTC days, so another zone's date would name the wrong one).
 */
export function bucketLabel(at: number, period: Period, options: LabelOptions = {}): string {
  if (period === 'day') {
    return new Date(at * 1000).toLocaleDateString(options.locale, { weekday: 'short', month: 'short', day: 'numeric', timeZone: 'UTC' });
  }
  const clock = new Intl.DateTimeFormat(options.locale, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: options.timeZone });
  return `${clock.format(at * 1000)}–${clock.format((at + 3600) * 1000)}`;
}

export const requestsText = (n: number): string => (n === 1 ? '1 request' : `${count(n)} requests`);
const failedText = (n: number): string => (n === 0 ? 'none failed' : `${count(n)} failed`);
export const percentText = (v: number): string => `${Number(v.toFixed(1))}%`;
const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/** The sentence for one bucket, or "no requests" where it had none. */
function perBucket(series: TimeSeries, period: Period, options: LabelOptions, words: (i: number) => string): (i: number) => string {
  return (i) => {
    const label = bucketLabel(series.times[i]!, period, options);
    return series.requests[i] ? `${label}: ${words(i)}` : `${label}: no requests`;
  };
}

export function spendText(series: TimeSeries, period: Period, options: LabelOptions = {}): ChartText {
  // Money summed in nano-dollars, so the total is the exact sum.
  const nano = series.cost.reduce((n, v) => n + Math.round(v * 1e9), 0);
  return {
    idle: `Spend ${RANGE_WORDS[period]}: ${usd(nano / 1e9)} in all`,
    at: perBucket(series, period, options, (i) => `${usd(series.cost[i])} over ${requestsText(series.requests[i]!)}`),
  };
}

export function requestsChartText(series: TimeSeries, period: Period, options: LabelOptions = {}): ChartText {
  return {
    idle: `Requests ${RANGE_WORDS[period]}: ${count(sum(series.requests))} in all, ${failedText(sum(series.errors))}`,
    at: perBucket(series, period, options, (i) => `${requestsText(series.requests[i]!)}, ${failedText(series.errors[i]!)}`),
  };
}

export function tokensText(series: TimeSeries, period: Period, options: LabelOptions = {}): ChartText {
  return {
    idle: `Tokens ${RANGE_WORDS[period]}: ${count(sum(series.tokens))} in all`,
    at: perBucket(series, period, options, (i) => `${count(series.tokens[i])} tokens over ${requestsText(series.requests[i]!)}`),
  };
}

export function errorRateText(series: TimeSeries, period: Period, options: LabelOptions = {}): ChartText {
  const requests = sum(series.requests);
  const errors = sum(series.errors);
  return {
    idle: `Share of requests that failed, ${RANGE_WORDS[period]}: ${requests ? `${percentText((100 * errors) / requests)} in all` : 'no requests'}`,
    at: perBucket(series, period, options, (i) => {
      const n = series.requests[i]!;
      const failed = series.errors[i]!;
      return failed === 0 ? `none of ${requestsText(n)} failed` : `${count(failed)} of ${requestsText(n)} failed (${percentText((100 * failed) / n)})`;
    }),
  };
}
