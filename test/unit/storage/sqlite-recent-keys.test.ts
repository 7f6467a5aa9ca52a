// SQLite's key rows kept for a second (docs/adr/0027-recent-key-rows.md): a request that holds may reuse
// the row this process read lately; any change this process makes to a key or an account forgets it, and
// so does any commit another connection (a CLI command, another worker) made to the file since.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteFile } from '../../../src/storage/sqlite/driver.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { testNewKey } from '../../support/key-fixture.js';

const SECOND = 1_000;

async function withStore(run: (store: ReturnType<typeof openSqliteStore>, file: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-recent-keys-'));
  const file = join(dir, 'db.sqlite');
  const store = openSqliteStore(file);
  try {
    await store.keys.create(testNewKey('key_a', { initialBalance: 5_000, now: Date.now() }));
    await run(store, file);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('SQLite key lookups for requests that hold', () => {
  test('a row read within the second is reused; a read that takes no age reads the file', async () => {
    await withStore(async (store) => {
      const first = await store.keys.findByHash('hash-key_a', SECOND);
      assert.ok(first);
      assert.equal(await store.keys.findByHash('hash-key_a', SECOND), first, 'the same record: no read');
      assert.notEqual(await store.keys.findByHash('hash-key_a', 0), first, 'maxAge 0: read again');
      assert.equal(await store.keys.findByHash('hash-unknown', SECOND), undefined);
    });
  });

  test("another connection's commit (a CLI command in another process) is seen at once", async () => {
    await withStore(async (store, file) => {
      assert.equal((await store.keys.findByHash('hash-key_a', SECOND))!.allowedModels, '*');
      const other = openSqliteFile(file);
      try {
        other.prepare(`UPDATE api_keys SET allowed_models = '["gpt-test"]' WHERE id = 'key_a'`).run();
        other.prepare(`UPDATE api_keys SET status = 'revoked' WHERE id = 'key_a'`).run();
      } finally {
        other.close();
      }
      const after = await store.keys.findByHash('hash-key_a', SECOND);
      assert.deepEqual([after!.allowedModels, after!.status], [['gpt-test'], 'revoked']);
    });
  });

  test("this process's changes to the key or its account are seen at once", async () => {
    await withStore(async (store) => {
      const read = () => store.keys.findByHash('hash-key_a', SECOND);
      const key = (await read())!;
      await store.keys.setAllowedModels('key_a', ['gpt-a']);
      assert.deepEqual((await read())!.allowedModels, ['gpt-a']);
      await store.keys.setLimits('key_a', { rpm: 7 });
      assert.equal((await read())!.limits.rpm, 7);
      await store.keys.update('key_a', { name: 'renamed' });
      assert.equal((await read())!.name, 'renamed');
      const balance = (await read())!.account.balance;
      assert.equal(await store.accounts.credit({ accountId: key.accountId, kind: 'topup', amount: 1_000, requestId: 'more', note: null, now: Date.now() }), 'applied');
      assert.equal((await read())!.account.balance, balance + 1_000);
      await store.accounts.update(key.accountId, { status: 'suspended' });
      assert.equal((await read())!.account.status, 'suspended');
      await store.keys.revoke('key_a', Date.now());
      assert.equal((await read())!.status, 'revoked');
    });
  });
});
