// The dashboard's hash routes and the usage filters it sends: a record's page (#/keys/<id>,
// #/usage/<request id>) round-trips any id, and each status choice becomes the API's `status` value.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { accountHref, keyHref, parseRoute, requestHref } from '../../../dashboard/src/route.js';
import { kindOfToken } from '../../../dashboard/src/token-kind.js';
import { EMPTY_FILTERS, STATUS_CHOICES, queryOf } from '../../../dashboard/src/usage-filters.js';

describe('dashboard routes', () => {
  test('reads a page, and a record of it, from the hash', () => {
    assert.deepEqual(parseRoute(''), { page: '' });
    assert.deepEqual(parseRoute('#/'), { page: '' });
    assert.deepEqual(parseRoute('#/keys'), { page: 'keys' });
    assert.deepEqual(parseRoute('#/keys/'), { page: 'keys' });
    assert.deepEqual(parseRoute('#/keys/key_0123'), { page: 'keys', id: 'key_0123' });
    assert.deepEqual(parseRoute('#/usage/req_01a2'), { page: 'usage', id: 'req_01a2' });
  });

  test('round-trips ids with any character through the link', () => {
    for (const id of ['req_abc', 'a/b?c#d', 'spaces and ünïcode', '%41']) {
      assert.deepEqual(parseRoute(requestHref(id)), { page: 'usage', id });
      assert.deepEqual(parseRoute(keyHref(id)), { page: 'keys', id });
      assert.deepEqual(parseRoute(accountHref(id)), { page: 'accounts', id });
    }
  });

  test('keeps a malformed escape as it is (it then names no record)', () => {
    assert.deepEqual(parseRoute('#/usage/%E0%A4%A'), { page: 'usage', id: '%E0%A4%A' });
  });
});

describe('dashboard sign-in', () => {
  test('tells an account token (tga-) from a key (tg-) from anything else (the admin token)', () => {
    const body = 'A'.repeat(42) + '_';
    assert.equal(kindOfToken(`tga-${body}`), 'account');
    assert.equal(kindOfToken(`tg-${body}`), 'keyholder');
    assert.equal(kindOfToken(`tga-${body}x`), 'operator', 'a token of the wrong length is no account token');
    assert.equal(kindOfToken('some-admin-token'), 'operator');
  });
});

describe('dashboard usage filters', () => {
  test('sends each status choice as the API’s status value: a class, or the code typed', () => {
    const sent = Object.fromEntries(STATUS_CHOICES.map((c) => [c.value, queryOf({ ...EMPTY_FILTERS, status: c.value, code: ' 402 ' }).status]));
    assert.deepEqual(sent, { '': '', '2xx': '2xx', error: 'error', '4xx': '4xx', '5xx': '5xx', code: '402' });
  });

  test('trims text filters and writes times as ISO instants', () => {
    const query = queryOf({ ...EMPTY_FILTERS, model: ' gpt-test ', since: '2026-11-25T10:00' });
    assert.equal(query.model, 'gpt-test');
    assert.equal(query.since, new Date('2026-11-25T10:00').toISOString());
    assert.equal(query.until, '');
  });
});
