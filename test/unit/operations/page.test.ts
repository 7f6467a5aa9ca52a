// Cursor pagination's edges: opaque cursors that only their own list accepts, limits, and the list shape.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { isGatewayError } from '../../../src/errors.js';
import { decodeCursor, encodeCursor, listPage, pageSize } from '../../../src/operations/page.js';

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
