// The dashboard's reading of usage summaries: bucket labels in every form the API may write, dense time
// series over the chart's range (a quiet hour is a zero, not a gap), and totals exact to the nano-dollar.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bucketSeconds, groupOf, rangeStart, timeSeries, totals } from '../../../dashboard/src/summary.js';
import type { UsageTotalsJson } from '../../../dashboard/src/types.js';

const row = (group: string | null, requests: number, cost: number, errors = 0): UsageTotalsJson => ({
  group,
  requests,
  errors,
  input_tokens: 10 * requests,
  cached_input_tokens: 0,
  output_tokens: 5 * requests,
  reasoning_tokens: 0,
  cost,
});

describe('dashboard summaries', () => {
  test('reads bucket labels as ISO times, ISO dates, ISO hours and epoch numbers alike', () => {
    const at = Date.UTC(2026, 10, 25, 22) / 1000;
    assert.equal(bucketSeconds('2026-11-25T22:00:00.000Z'), at);
    assert.equal(bucketSeconds('2026-11-25T22'), at);
    assert.equal(bucketSeconds(String(at * 1000)), at, 'epoch milliseconds');
    assert.equal(bucketSeconds(String(at)), at, 'epoch seconds');
    assert.equal(bucketSeconds('2026-11-25'), Date.UTC(2026, 10, 25) / 1000);
    assert.ok(Number.isNaN(bucketSeconds('yesterday')));
  });

  test('takes a row’s name from `group`, and an empty one for the rows without one (null)', () => {
    assert.equal(groupOf(row('gpt-test', 1, 0)), 'gpt-test');
    assert.equal(groupOf(row(null, 1, 0)), '', 'requests that named no model');
  });

  test('makes 24 hourly buckets ending in the current hour, zero where nothing happened', () => {
    const now = Date.UTC(2026, 10, 25, 22, 41);
    const start = rangeStart('hour', now);
    assert.equal(start * 1000, Date.UTC(2026, 10, 24, 23), 'the first bucket is 23 hours before the current one');
    const series = timeSeries([row(new Date(Date.UTC(2026, 10, 25, 22)).toISOString(), 4, 0.25, 1), row(new Date(Date.UTC(2026, 10, 25, 3)).toISOString(), 2, 0.5)], 'hour', now);
    assert.equal(series.times.length, 24);
    assert.equal(series.times[23]! * 1000, Date.UTC(2026, 10, 25, 22));
    assert.equal(series.requests[23], 4);
    assert.equal(series.errorRate[23], 25, 'one failure in four requests');
    assert.equal(series.cost[4], 0.5, '03:00 is the fifth bucket');
    assert.equal(series.requests.reduce((a, b) => a + b, 0), 6, 'nothing lost, nothing invented');
    assert.equal(series.errorRate[0], null, 'no error rate without requests');
  });

  test('makes 30 daily buckets, and ignores rows outside the range', () => {
    const now = Date.UTC(2026, 10, 25, 12);
    const series = timeSeries([row('2026-11-25', 3, 1), row('2026-10-01', 9, 9)], 'day', now);
    assert.equal(series.times.length, 30);
    assert.equal(series.requests[29], 3);
    assert.equal(series.requests.reduce((a, b) => a + b, 0), 3);
  });

  test('adds money in nano-dollars, so a total is the exact sum of its rows', () => {
    const rows = [row('a', 1, 0.1), row('b', 1, 0.2), row('c', 1, 0.000000001)];
    assert.equal(0.1 + 0.2 + 0.000000001 === 0.300000001, false, 'floating point alone would not be exact');
    assert.equal(totals(rows).cost, 0.300000001);
    assert.deepEqual({ ...totals(rows), cost: undefined }, { requests: 3, tokens: 45, errors: 0, cost: undefined });
  });
});
