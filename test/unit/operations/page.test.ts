// Cursor pagination's edges (opaque cursors that only their own list accepts, limits, the list shape) and
// the usage filters every face reads.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { isGatewayError } from '../../../src/errors.js';
import { decodeCursor, encodeCursor, listPage, pageSize } from '../../../src/operations/page.js';
import { usageFilterOf } from '../../../src/operations/usage.js';

const isNumber = (p: unknown): p is number => typeof p === 'number';

function assertBadCursor(fn: () => unknown): void {
  assert.throws(fn, (error: unknown) => isGatewayError(error) && error.code === 'invalid_request' && error.param === 'after');
}

describe('cursors', () => {
  test('a cursor reads back as the position it was made from, for its own list only', () => {
    const cursor = encodeCursor('usage', 42);
    assert.match(cursor, /^[A-Za-z0-9_-]+$/);
    assert.equal(decodeCursor('usage', cursor, isNumber), 42);
    assertBadCursor(() => decodeCursor('ledger', cursor, isNumber));
  });

  test('malformed cursors are a 400 naming after', () => {
    for (const bad of ['', 'not base64!', Buffer.from('not json').toString('base64url'), Buffer.from('null').toString('base64url'), encodeCursor('usage', 'x'), 'A'.repeat(600), 5]) {
      assertBadCursor(() => decodeCursor('usage', bad, isNumber));
    }
  });
});

describe('pageSize', () => {
  test('defaults to 100 and accepts 1 to 1000, as a number or a digit string', () => {
    assert.equal(pageSize(undefined), 100);
    assert.equal(pageSize('1'), 1);
    assert.equal(pageSize(1000), 1000);
    for (const bad of [0, '0', 1001, '1e3', '-1', 2.5, 'ten', null]) {
      assert.throws(() => pageSize(bad), (error: unknown) => isGatewayError(error) && error.param === 'limit', String(bad));
    }
  });
});

describe('listPage', () => {
  test('one row beyond the limit means more follow, with a cursor at the last row shown', () => {
    const page = listPage('usage', [5, 4, 3], 2, (n) => ({ n }), (n) => n);
    assert.deepEqual(page.data, [{ n: 5 }, { n: 4 }]);
    assert.equal(page.has_more, true);
    assert.equal(decodeCursor('usage', page.next_cursor, isNumber), 4);
    assert.deepEqual(listPage('usage', [5, 4], 2, (n) => n, (n) => n), { object: 'list', data: [5, 4], has_more: false, next_cursor: null });
  });
});

describe('usage filters', () => {
  test('times are ISO 8601 dates or date-times with a zone; anything else is a 400 naming the field', () => {
    assert.deepEqual(usageFilterOf({ since: '2026-11-01', until: '2026-11-01T09:30:00+02:00' }), {
      since: Date.UTC(2026, 10, 1),
      until: Date.UTC(2026, 10, 1, 7, 30),
    });
    assert.equal(usageFilterOf({ since: '2026-11-01T00:00:00.123456789Z' }).since, Date.UTC(2026, 10, 1) + 123);
    for (const bad of ['2026-11-01T09:00:00', 'Nov 1 2026', 'yesterday', '1700000000000', '']) {
      assert.throws(() => usageFilterOf({ since: bad }), (error: unknown) => isGatewayError(error) && error.param === 'since', bad);
    }
    assert.deepEqual(usageFilterOf({ status: '502', key_id: 'key_1' }), { status: 502, keyId: 'key_1' });
    for (const bad of ['ok', '2000', 99]) assert.throws(() => usageFilterOf({ status: bad }), (error: unknown) => isGatewayError(error) && error.param === 'status');
  });
});
