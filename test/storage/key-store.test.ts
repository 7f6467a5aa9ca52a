// API keys, on SQLite and PostgreSQL alike: create, look up, list, top up, allow-lists, revocation.
import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { NewKey, Store } from '../../src/storage/types.js';
import { storeDialects } from '../support/store-dialects.js';

const T0 = Date.UTC(2025, 0, 2, 3, 4, 5);

function newKey(overrides: Partial<NewKey> = {}): NewKey {
  const id = overrides.id ?? 'key_a';
  return {
    id,
    name: 'alice',
    prefix: 'tg-abcdefg',
    secretHash: `hash-of-${id}`,
    allowedModels: '*',
    initialBalance: 5_000_000_000,
    topupRequestId: `topup-${id}-initial`,
    now: T0,
    ...overrides,
  };
}

for (const dialect of await storeDialects()) {
  describe(dialect.name, { skip: dialect.skip }, () => {
    let store: Store;
    beforeEach(async () => {
      store = await dialect.open();
    });
    afterEach(async () => {
      await store.close();
    });

    describe('KeyStore', () => {
      test('creates a key with its initial balance and returns the record', async () => {
        const record = await store.keys.create(newKey({ allowedModels: ['gpt-4o-mini', 'text-embedding-3-small'] }));
        assert.deepEqual(record, {
          id: 'key_a',
          name: 'alice',
          prefix: 'tg-abcdefg',
          balance: 5_000_000_000,
          held: 0,
          spent: 0,
          // Without an account, a personal one named after the key holds its balance.
          accountId: 'acct_a',
          account: {
            id: 'acct_a',
            name: 'alice',
            balance: 5_000_000_000,
            held: 0,
            spent: 0,
            status: 'active',
            limits: { budget: null, budgetPeriod: null },
            budgetSpent: 0,
            budgetPeriodStart: 0,
            personal: true,
          },
          creditLimit: null,
          allowedModels: ['gpt-4o-mini', 'text-embedding-3-small'],
          status: 'active',
          createdAt: '2025-01-02T03:04:05.000Z',
          limits: { rpm: null, tpm: null, maxConcurrent: null, budget: null, budgetPeriod: null },
          expiresAt: null,
          budgetSpent: 0,
          budgetPeriodStart: 0,
          clampMaxTokens: false,
          metadata: {},
        });
      });

      test('creates a key with its own limits and expiry', async () => {
        const limits = { rpm: 60, tpm: 100_000, maxConcurrent: 4, budget: 2_500_000_000, budgetPeriod: 'week' as const };
        const record = await store.keys.create(newKey({ limits, expiresAt: 1_800_000_000_000 }));
        assert.deepEqual(record.limits, limits);
        assert.equal(record.expiresAt, 1_800_000_000_000);
      });

      test('setLimits changes only the fields a patch names; null clears the key\'s own value', async () => {
        await store.keys.create(newKey({ limits: { rpm: 60, tpm: 1000, maxConcurrent: null, budget: 5_000, budgetPeriod: 'day' } }));
        let record = (await store.keys.setLimits('key_a', { tpm: null, maxConcurrent: 2, expiresAt: 1_900_000_000_000 }))!;
        assert.deepEqual(record.limits, { rpm: 60, tpm: null, maxConcurrent: 2, budget: 5_000, budgetPeriod: 'day' });
        assert.equal(record.expiresAt, 1_900_000_000_000);
        record = (await store.keys.setLimits('key_a', {}))!;
        assert.deepEqual(record.limits, { rpm: 60, tpm: null, maxConcurrent: 2, budget: 5_000, budgetPeriod: 'day' }, 'an empty patch changes nothing');
        record = (await store.keys.setLimits('key_a', { rpm: null, budget: null, budgetPeriod: null, expiresAt: null }))!;
        assert.deepEqual(record.limits, { rpm: null, tpm: null, maxConcurrent: 2, budget: null, budgetPeriod: null });
        assert.equal(record.expiresAt, null);
        assert.equal(await store.keys.setLimits('key_nope', { rpm: 1 }), undefined);
      });

      test('records the initial balance as a topup ledger entry', async () => {
        await store.keys.create(newKey());
        const audit = await store.ledger.audit('key_a');
        assert.deepEqual(audit.derived, { balance: 5_000_000_000, held: 0, spent: 0 });
        assert.deepEqual(audit.cached, audit.derived);
      });

      test('creates a key with a zero balance', async () => {
        const record = await store.keys.create(newKey({ initialBalance: 0 }));
        assert.equal(record.balance, 0);
        assert.deepEqual((await store.ledger.audit('key_a')).derived, { balance: 0, held: 0, spent: 0 });
      });

      test('gets a key by id and finds it by secret hash', async () => {
        const created = await store.keys.create(newKey());
        assert.deepEqual(await store.keys.get('key_a'), created);
        assert.deepEqual(await store.keys.findByHash('hash-of-key_a'), created);
        assert.equal(await store.keys.get('key_missing'), undefined);
        assert.equal(await store.keys.findByHash('no-such-hash'), undefined);
      });

      test('refuses two keys with the same secret hash', async () => {
        await store.keys.create(newKey());
        await assert.rejects(store.keys.create(newKey({ id: 'key_b', secretHash: 'hash-of-key_a' })));
        assert.equal(await store.keys.get('key_b'), undefined);
      });

      test('lists keys in creation order', async () => {
        await store.keys.create(newKey({ id: 'key_z', now: T0 }));
        await store.keys.create(newKey({ id: 'key_a', now: T0 + 1000 }));
        await store.keys.create(newKey({ id: 'key_m', now: T0 + 500 }));
        assert.deepEqual((await store.keys.list()).map((k) => k.id), ['key_z', 'key_m', 'key_a']);
      });

      test('tops up a key and returns the new balance', async () => {
        await store.keys.create(newKey());
        const after = await store.keys.topUp('key_a', 2_500_000_000, 'topup-2', T0 + 1);
        assert.equal(after!.balance, 7_500_000_000);
        assert.deepEqual((await store.ledger.audit('key_a')).derived, { balance: 7_500_000_000, held: 0, spent: 0 });
      });

      test('returns undefined when topping up an unknown key and writes nothing', async () => {
        assert.equal(await store.keys.topUp('key_missing', 1, 'topup-x', T0), undefined);
        assert.deepEqual((await store.keys.list()), []);
      });

      test('refuses a second top-up with the same request id, leaving the balance as it was', async () => {
        await store.keys.create(newKey());
        await store.keys.topUp('key_a', 1_000, 'topup-dup', T0);
        await assert.rejects(store.keys.topUp('key_a', 1_000, 'topup-dup', T0));
        assert.equal((await store.keys.get('key_a'))!.balance, 5_000_001_000);
        const audit = await store.ledger.audit('key_a');
        assert.deepEqual(audit.cached, audit.derived);
      });

      test('replaces the allow-list, with a list or with "*"', async () => {
        await store.keys.create(newKey());
        assert.deepEqual((await store.keys.setAllowedModels('key_a', ['m1']))!.allowedModels, ['m1']);
        assert.deepEqual((await store.keys.get('key_a'))!.allowedModels, ['m1']);
        assert.deepEqual((await store.keys.setAllowedModels('key_a', []))!.allowedModels, []);
        assert.equal((await store.keys.setAllowedModels('key_a', '*'))!.allowedModels, '*');
        assert.equal(await store.keys.setAllowedModels('key_missing', '*'), undefined);
      });

      test('revokes a key, keeping its balance and history', async () => {
        await store.keys.create(newKey());
        const revoked = await store.keys.revoke('key_a', T0 + 10);
        assert.equal(revoked!.status, 'revoked');
        assert.equal(revoked!.balance, 5_000_000_000);
        assert.equal((await store.keys.findByHash('hash-of-key_a'))!.status, 'revoked');
        assert.equal((await store.keys.revoke('key_a', T0 + 20))!.status, 'revoked');
        assert.equal(await store.keys.revoke('key_missing', T0), undefined);
      });
    });
  });
}

describe('openSqliteStore on a file', () => {
  test('creates the directory, migrates once and keeps data across reopenings', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-store-'));
    const file = join(dir, 'nested', 'dir', 'tollgate.db');
    try {
      const first = openSqliteStore(file);
      await first.keys.create(newKey());
      await first.close();
      const second = openSqliteStore(file);
      try {
        assert.equal((await second.keys.get('key_a'))!.balance, 5_000_000_000);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
