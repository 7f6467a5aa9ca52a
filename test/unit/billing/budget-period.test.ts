// UTC budget periods: day, ISO week (from Monday), calendar month.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { nextPeriodStart, periodStart } from '../../../src/billing/budget-period.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

describe('budget periods', () => {
  test('a day runs from 00:00 to 24:00 UTC', () => {
    assert.equal(iso(periodStart(at('2026-11-25T23:59:59.999Z'), 'day')), '2026-11-25T00:00:00.000Z');
    assert.equal(iso(nextPeriodStart(at('2026-11-25T23:59:59.999Z'), 'day')), '2026-11-26T00:00:00.000Z');
    assert.equal(iso(periodStart(at('2026-11-26T00:00:00.000Z'), 'day')), '2026-11-26T00:00:00.000Z', 'the boundary belongs to the new day');
  });

  test('an ISO week starts on Monday 00:00 UTC', () => {
    // 2026-11-25 is a Wednesday; 2026-11-23 the Monday before; 2026-11-29 a Sunday.
    assert.equal(iso(periodStart(at('2026-11-25T12:00:00Z'), 'week')), '2026-11-23T00:00:00.000Z');
    assert.equal(iso(periodStart(at('2026-11-29T23:59:59Z'), 'week')), '2026-11-23T00:00:00.000Z', 'Sunday ends the week');
    assert.equal(iso(periodStart(at('2026-11-23T00:00:00Z'), 'week')), '2026-11-23T00:00:00.000Z');
    assert.equal(iso(nextPeriodStart(at('2026-11-25T12:00:00Z'), 'week')), '2026-11-30T00:00:00.000Z');
    assert.equal(iso(periodStart(at('2027-01-01T08:00:00Z'), 'week')), '2026-12-28T00:00:00.000Z', 'across a year end');
  });

  test('a month starts on the 1st 00:00 UTC, whatever its length', () => {
    assert.equal(iso(periodStart(at('2026-11-25T12:00:00Z'), 'month')), '2026-11-01T00:00:00.000Z');
    assert.equal(iso(nextPeriodStart(at('2026-12-31T23:59:59Z'), 'month')), '2027-01-01T00:00:00.000Z');
    assert.equal(iso(nextPeriodStart(at('2028-02-10T00:00:00Z'), 'month')), '2028-03-01T00:00:00.000Z', 'a leap February');
  });
});
