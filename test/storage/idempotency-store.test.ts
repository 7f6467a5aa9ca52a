// Idempotency-Key records, on SQLite and PostgreSQL alike: one claim per (scope, key); a second request
// is told the first is running, that its body differs, or given the recorded answer; an abandoned claim
// (its lease lapsed) and an expired record can be claimed again.
import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { IdempotencyClaim } from '../../src/storage/types.js';
import { storeDialects, type TestStore } from '../support/store-dialects.js';

const T0 = 1_750_000_000_000;
const LEASE = 10_000;
const KEEP = 86_400_000;

function claim(key: string, overrides: Partial<IdempotencyClaim> = {}): IdempotencyClaim {
  return { scope: 'admin', key, requestHash: 'hash-a', now: T0, leaseMs: LEASE, keepMs: KEEP, ...overrides };
}

const ANSWER = { status: 200, contentType: 'application/json', body: '{"id":"key_1","balance":12.5}' };

for (const dialect of await storeDialects()) {
  describe(dialect.name, { skip: dialect.skip }, () => {
    let store: TestStore;
    beforeEach(async () => {
      store = await dialect.open();
    });
    afterEach(async () => {
      await store.close();
    });

    test('the first claim runs; while it runs, a second with the same key and body is told so', async () => {
      assert.deepEqual(await store.idempotency.claim(claim('k1')), { outcome: 'claimed' });
      assert.deepEqual(await store.idempotency.claim(claim('k1', { now: T0 + 1 })), { outcome: 'running' });
    });

    test('once complete, the answer is replayed, byte for byte, for as long as the record is kept', async () => {
      await store.idempotency.claim(claim('k1'));
      await store.idempotency.complete('admin', 'k1', ANSWER, T0 + 5);
      assert.deepEqual(await store.idempotency.claim(claim('k1', { now: T0 + 10 })), { outcome: 'done', answer: ANSWER });
      assert.deepEqual(await store.idempotency.claim(claim('k1', { now: T0 + KEEP - 1 })), { outcome: 'done', answer: ANSWER });
    });

    test('another body under the same key is a mismatch, running or done', async () => {
      await store.idempotency.claim(claim('k1'));
      assert.deepEqual(await store.idempotency.claim(claim('k1', { requestHash: 'hash-b' })), { outcome: 'mismatch' });
      await store.idempotency.complete('admin', 'k1', ANSWER, T0 + 5);
      assert.deepEqual(await store.idempotency.claim(claim('k1', { requestHash: 'hash-b' })), { outcome: 'mismatch' });
    });

    test('an answer too large to keep is recorded as done without one', async () => {
      await store.idempotency.claim(claim('k1'));
      await store.idempotency.complete('admin', 'k1', null, T0 + 5);
      assert.deepEqual(await store.idempotency.claim(claim('k1', { now: T0 + 6 })), { outcome: 'done', answer: null });
    });

    test('scopes never meet: two callers may use the same key', async () => {
      assert.deepEqual(await store.idempotency.claim(claim('k1', { scope: 'key:key_a' })), { outcome: 'claimed' });
      assert.deepEqual(await store.idempotency.claim(claim('k1', { scope: 'key:key_b', requestHash: 'other' })), { outcome: 'claimed' });
    });

    test('a claim whose lease lapsed (its process died) can be claimed again; renewing keeps it', async () => {
      await store.idempotency.claim(claim('k1'));
      await store.idempotency.renew('admin', 'k1', T0 + 3 * LEASE);
      assert.deepEqual(await store.idempotency.claim(claim('k1', { now: T0 + 2 * LEASE })), { outcome: 'running' }, 'renewed: still running');
      assert.deepEqual(await store.idempotency.claim(claim('k1', { now: T0 + 3 * LEASE })), { outcome: 'claimed' }, 'lapsed: taken over');
      assert.deepEqual(await store.idempotency.claim(claim('k1', { now: T0 + 3 * LEASE + 1 })), { outcome: 'running' });
    });

    test('forget lets a claimed request run again; it never forgets a done one', async () => {
      await store.idempotency.claim(claim('k1'));
      await store.idempotency.forget('admin', 'k1');
      assert.deepEqual(await store.idempotency.claim(claim('k1', { requestHash: 'hash-b' })), { outcome: 'claimed' });
      await store.idempotency.complete('admin', 'k1', ANSWER, T0);
      await store.idempotency.forget('admin', 'k1');
      assert.deepEqual(await store.idempotency.claim(claim('k1', { requestHash: 'hash-b' })), { outcome: 'done', answer: ANSWER });
    });

    test('records are deleted past their keeping time, and an expired key is new again', async () => {
      await store.idempotency.claim(claim('old'));
      await store.idempotency.complete('admin', 'old', ANSWER, T0);
      await store.idempotency.claim(claim('young', { now: T0 + 1000 }));
      assert.deepEqual(await store.idempotency.claim(claim('old', { now: T0 + KEEP, requestHash: 'hash-b' })), { outcome: 'claimed' }, 'expired: a new request');
      await store.idempotency.claim(claim('gone', { now: T0 }));
      assert.equal(await store.idempotency.expire(T0 + KEEP + 500, 100), 1, 'only what is past its time');
      const rows = await store.query<{ idempotency_key: string }>('SELECT idempotency_key FROM idempotency_keys ORDER BY idempotency_key');
      assert.deepEqual(rows.map((r) => r.idempotency_key), ['old', 'young']);
    });

    test('of many concurrent claims of one key exactly one wins', async () => {
      const outcomes = await Promise.all(Array.from({ length: 50 }, () => store.idempotency.claim(claim('race'))));
      assert.equal(outcomes.filter((o) => o.outcome === 'claimed').length, 1);
      assert.equal(outcomes.filter((o) => o.outcome === 'running').length, 49);
    });
  });
}
