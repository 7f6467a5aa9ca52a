// The dashboard's chart legends in words: the range and its total while nothing is pointed at, the hour or
// day pointed at with its figures, "no requests" for a quiet bucket, and singular where it is one.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bucketLabel, errorRateText, requestsChartText, spendText, tokensText } from '../../../dashboard/src/chart-text.js';
import { timeSeries } from '../../../dashboard/src/summary.js';
import type { UsageTotalsJson } from '../../../dashboard/src/types.js';

const UTC = { locale: 'en-US', timeZone: 'UTC' } as const;
const NOW = Date.UTC(2026, 10, 25, 14, 41);
const hour = (h: number) => new Date(Date.UTC(2026, 10, 25, h)).toISOString();
const row = (group: string, requests: number, cost: number, errors = 0): UsageTotalsJson => ({ group, requests, errors, input_tokens: 100 * requests, cached_input_tokens: 0, output_tokens: 20 * requests, reasoning_tokens: 0, cost });

describe('dashboard chart legends', () => {
  const series = timeSeries([row(hour(14), 120, 1.23, 3), row(hour(13), 1, 0.1), row(hour(12), 4, 0.000000001)], 'hour', NOW);
  const last = series.times.length - 1;

  test('names an hour as its span on a 24-hour clock, and a day as its UTC date', () => {
    assert.equal(bucketLabel(Date.UTC(2026, 10, 25, 14) / 1000, 'hour', UTC), '14:00–15:00');
    assert.equal(bucketLabel(Date.UTC(2026, 10, 25, 23) / 1000, 'hour', UTC), '23:00–00:00');
    assert.equal(bucketLabel(Date.UTC(2026, 10, 25, 14) / 1000, 'hour', { locale: 'en-US', timeZone: 'Asia/Kolkata' }), '19:30–20:30', 'in the viewer’s zone');
    assert.equal(bucketLabel(Date.UTC(2026, 10, 25) / 1000, 'day', { locale: 'en-US', timeZone: 'America/Los_Angeles' }), 'Wed, Nov 25', 'the UTC day, whatever the zone');
  });

  test('says the range and its exact total while nothing is pointed at', () => {
    assert.equal(spendText(series, 'hour').idle, 'Spend per hour over the last 24 hours: $1.330000001 in all');
    assert.equal(requestsChartText(series, 'hour').idle, 'Requests per hour over the last 24 hours: 125 in all, 3 failed');
    assert.equal(tokensText(series, 'hour').idle, 'Tokens per hour over the last 24 hours: 15,000 in all');
    assert.equal(errorRateText(series, 'hour').idle, 'Share of requests that failed, per hour over the last 24 hours: 2.4% in all');
    const quiet = timeSeries([], 'day', NOW);
    assert.equal(spendText(quiet, 'day').idle, 'Spend per day over the last 30 days: $0.00 in all');
    assert.equal(errorRateText(quiet, 'day').idle, 'Share of requests that failed, per day over the last 30 days: no requests');
  });

  test('says the figures of the bucket pointed at', () => {
    assert.equal(spendText(series, 'hour', UTC).at(last), '14:00–15:00: $1.23 over 120 requests');
    assert.equal(spendText(series, 'hour', UTC).at(last - 1), '13:00–14:00: $0.10 over 1 request', 'one request, singular');
    assert.equal(requestsChartText(series, 'hour', UTC).at(last), '14:00–15:00: 120 requests, 3 failed');
    assert.equal(requestsChartText(series, 'hour', UTC).at(last - 1), '13:00–14:00: 1 request, none failed');
    assert.equal(tokensText(series, 'hour', UTC).at(last), '14:00–15:00: 14,400 tokens over 120 requests');
    assert.equal(errorRateText(series, 'hour', UTC).at(last), '14:00–15:00: 3 of 120 requests failed (2.5%)');
    assert.equal(errorRateText(series, 'hour', UTC).at(last - 2), '12:00–13:00: none of 4 requests failed');
  });

  test('says "no requests" for a quiet bucket, never a dash', () => {
    for (const text of [spendText, requestsChartText, tokensText, errorRateText]) {
      assert.equal(text(series, 'hour', UTC).at(0), '15:00–16:00: no requests');
    }
    const daily = timeSeries([row('2026-11-25', 2, 0.5)], 'day', NOW);
    assert.equal(spendText(daily, 'day', UTC).at(29), 'Wed, Nov 25: $0.50 over 2 requests');
    assert.equal(spendText(daily, 'day', UTC).at(28), 'Tue, Nov 24: no requests');
  });
});
