// Redemption codes in the store (docs/adr/0051-redemption-codes.md), on SQLite and PostgreSQL alike: a
// redeem claims the code and credits the account in one transaction; every refused redeem (unknown,
// used, revoked, expired, another account's, a suspended or missing account, a credit past the maximum)
// changes nothing; listings filter by status and batch in creation order; revoke leaves redeemed codes
// alone. Then the race: two stores on one database (two gateways) redeem one code 50 times at once, from
// two accounts — exactly one redeem applies, one account is credited once, and the audit finds nothing.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { MAX_NANO } from '../../src/billing/money.js';
import { generateRedemptionCode, hashKeySecret, redemptionCodePrefix } from '../../src/keys/secret.js';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { NewCode, Store } from '../../src/storage/types.js';
import { testNewKey } from '../support/key-fixture.js';
import { freshPgSchema } from '../support/postgres.js';
import { storeDialects, type TestStore } from '../support/store-dialects.js';

const T0 = 1_800_000_000_000;
const AMOUNT = 5_000_000_000;

let nextCode = 0;
/** A new code (its clear text, for redeeming) and the row to store. */
function newCode(overrides: Partial<NewCode> = {}): { code: string; row: NewCode } {
  const code = generateRedemptionCode();
  const row: NewCode = {
    id: `rc_${String(++nextCode).padStart(4, '0')}`,
    hash: hashKeySecret(code),
    prefix: redemptionCodePrefix(code),
    amount: AMOUNT,
    accountId: null,
    expiresAt: null,
    batchId: 'batch_a',
    note: null,
    now: T0,
    ...overrides,
  };
  return { code, row };
}

async function accountWith(store: Store, id: string, balance = 1_000): Promise<void> {
  await store.accounts.create({ id, name: id, initialBalance: balance, topupRequestId: `open-${id}`, now: T0 });
}

/** What a refused redeem must leave as it was: the accounts' money, every entry, every code row. */
async function snapshot(store: TestStore) {
  return {
    accounts: await store.query('SELECT id, balance, held, spent FROM accounts ORDER BY id'),
    entries: await store.query('SELECT request_id, kind, amount FROM ledger_entries ORDER BY id'),
    codes: await store.query('SELECT id, redeemed_at, redeemed_account_id, redeemed_key_id, revoked_at FROM redemption_codes ORDER BY id'),
  };
}

for (const dialect of await storeDialects()) {
  describe(`${dialect.name}: redemption codes`, { skip: dialect.skip }, () => {
    let store: TestStore;
    beforeEach(async () => {
      store = await dialect.open();
      await accountWith(store, 'acct_a');
      await accountWith(store, 'acct_b');
      await store.keys.create(testNewKey('key_a', { accountId: 'acct_a', now: T0 }));
    });
    afterEach(async () => {
      await store.close();
    });

    test('a redeem claims the code and credits the account once, in one step; the table holds only the hash and prefix', async () => {
      const { code, row } = newCode({ note: 'promo' });
      await store.codes.create([row]);
      const columns = (await store.query<Record<string, unknown>>('SELECT * FROM redemption_codes'))[0]!;
      assert.ok(!Object.values(columns).includes(code), 'the code itself is stored nowhere');
      assert.equal(columns.code_hash, hashKeySecret(code));

      const result = await store.codes.redeem({ hash: hashKeySecret(code), accountId: 'acct_a', keyId: 'key_a', now: T0 + 5 });
      assert.equal(result.outcome, 'applied');
      assert.ok(result.outcome === 'applied');
      assert.equal(result.account.balance, 1_000 + AMOUNT);
      assert.deepEqual(
        { at: result.code.redeemedAt, account: result.code.redeemedAccountId, key: result.code.redeemedKeyId },
        { at: T0 + 5, account: 'acct_a', key: 'key_a' },
      );
      const stored = (await store.codes.get(row.id))!;
      assert.deepEqual(stored, result.code);
      const entries = await store.query<{ request_id: string; kind: string; amount: number; key_id: string | null }>(
        'SELECT request_id, kind, amount, key_id FROM ledger_entries WHERE account_id = $1 ORDER BY id',
        ['acct_a'],
      );
      assert.deepEqual({ ...entries.at(-1)!, amount: Number(entries.at(-1)!.amount) }, { request_id: `redeem_${row.id}`, kind: 'topup', amount: AMOUNT, key_id: null });
      assert.deepEqual(await store.ledger.findViolations({ keyId: undefined, staleBefore: T0 }), []);

      // Once only, whoever asks next.
      const before = await snapshot(store);
      assert.deepEqual(await store.codes.redeem({ hash: hashKeySecret(code), accountId: 'acct_a', keyId: null, now: T0 + 6 }), { outcome: 'used' });
      assert.deepEqual(await store.codes.redeem({ hash: hashKeySecret(code), accountId: 'acct_b', keyId: null, now: T0 + 6 }), { outcome: 'used' });
      assert.deepEqual(await snapshot(store), before);
    });

    test('unknown, revoked, expired, another account, a suspended or missing account and a credit past the maximum each change nothing', async () => {
      const revoked = newCode();
      const expired = newCode({ expiresAt: T0 + 10 });
      const theirs = newCode({ accountId: 'acct_b' });
      const ok = newCode();
      const huge = newCode({ amount: MAX_NANO });
      await store.codes.create([revoked.row, expired.row, theirs.row, ok.row, huge.row]);
      assert.equal(await store.codes.revoke({ id: revoked.row.id }, T0 + 1), 1);
      await store.accounts.create({ id: 'acct_s', name: 's', initialBalance: 0, topupRequestId: 'open-s', now: T0 });
      await store.accounts.update('acct_s', { status: 'suspended' });

      const before = await snapshot(store);
      const redeem = (code: string, accountId = 'acct_a') => store.codes.redeem({ hash: hashKeySecret(code), accountId, keyId: null, now: T0 + 10 });
      assert.deepEqual(await redeem(generateRedemptionCode()), { outcome: 'unknown' });
      assert.deepEqual(await redeem(revoked.code), { outcome: 'revoked' });
      assert.deepEqual(await redeem(expired.code), { outcome: 'expired' }, 'expired at its expiry, not after');
      assert.deepEqual(await redeem(theirs.code), { outcome: 'wrong_account' });
      assert.deepEqual(await redeem(ok.code, 'acct_s'), { outcome: 'suspended' });
      assert.deepEqual(await redeem(ok.code, 'acct_nobody'), { outcome: 'missing' });
      assert.deepEqual(await redeem(huge.code), { outcome: 'over_maximum' }, 'the claim is rolled back with the credit');
      assert.deepEqual(await snapshot(store), before);

      // The restricted code is its account's; the refused ones stay as they were.
      assert.equal((await redeem(theirs.code, 'acct_b')).outcome, 'applied');
      assert.equal((await store.codes.get(huge.row.id))!.redeemedAt, null);
    });

    test('listings by status and batch, in creation order with a cursor; revoke skips redeemed codes', async () => {
      const a = [newCode(), newCode(), newCode({ expiresAt: T0 + 10 })];
      const b = [newCode({ batchId: 'batch_b' }), newCode({ batchId: 'batch_b', now: T0 + 1 })];
      await store.codes.create(a.map((c) => c.row));
      await store.codes.create(b.map((c) => c.row));
      assert.equal((await store.codes.redeem({ hash: hashKeySecret(b[0]!.code), accountId: 'acct_a', keyId: null, now: T0 + 2 })).outcome, 'applied');
      assert.equal(await store.codes.revoke({ batchId: 'batch_b' }, T0 + 3), 1, 'only the unredeemed code of the batch');
      assert.equal(await store.codes.revoke({ batchId: 'batch_b' }, T0 + 4), 0, 'a second revoke changes nothing');
      assert.equal(await store.codes.revoke({ id: b[0]!.row.id }, T0 + 4), 0, 'a redeemed code cannot be revoked');

      const ids = async (query: Partial<Parameters<Store['codes']['page']>[0]>) =>
        (await store.codes.page({ limit: 100, now: T0 + 20, ...query })).map((c) => c.id);
      assert.deepEqual(await ids({}), [...a, ...b].map((c) => c.row.id));
      assert.deepEqual(await ids({ status: 'unused' }), [a[0]!.row.id, a[1]!.row.id]);
      assert.deepEqual(await ids({ status: 'expired' }), [a[2]!.row.id]);
      assert.deepEqual(await ids({ status: 'unused', now: T0 + 5 }), a.map((c) => c.row.id), 'expiry is decided at now');
      assert.deepEqual(await ids({ status: 'redeemed' }), [b[0]!.row.id]);
      assert.deepEqual(await ids({ status: 'revoked' }), [b[1]!.row.id]);
      assert.deepEqual(await ids({ batchId: 'batch_b' }), b.map((c) => c.row.id));
      const first = await store.codes.page({ limit: 2, now: T0 });
      const rest = await store.codes.page({ limit: 100, now: T0, after: { createdAt: first[1]!.createdAt, id: first[1]!.id } });
      assert.deepEqual([...first, ...rest].map((c) => c.id), await ids({}));
    });
  });

  describe(`${dialect.name}: 50 redeems of one code at once`, { skip: dialect.skip }, () => {
    test('two stores on one database, two accounts: exactly one redeem applies and one account is credited once', async () => {
      const pair = await openPair(dialect.name);
      const [s1, s2] = pair.stores;
      try {
        await accountWith(s1, 'acct_a');
        await accountWith(s1, 'acct_b');
        const { code, row } = newCode();
        await s1.codes.create([row]);
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            (i % 2 === 0 ? s1 : s2).codes.redeem({ hash: hashKeySecret(code), accountId: i % 4 < 2 ? 'acct_a' : 'acct_b', keyId: null, now: T0 + i }),
          ),
        );
        const applied = results.filter((r) => r.outcome === 'applied');
        assert.equal(applied.length, 1, `outcomes: ${results.map((r) => r.outcome).join(',')}`);
        assert.deepEqual(new Set(results.filter((r) => r.outcome !== 'applied').map((r) => r.outcome)), new Set(['used']));
        const winner = applied[0]!.outcome === 'applied' ? applied[0]!.account.id : '';
        const [a, b] = [(await s1.accounts.get('acct_a'))!, (await s1.accounts.get('acct_b'))!];
        assert.equal(a.balance + b.balance, 2_000 + AMOUNT, 'credited once in all');
        assert.equal((winner === 'acct_a' ? a : b).balance, 1_000 + AMOUNT);
        assert.equal((await s2.codes.get(row.id))!.redeemedAccountId, winner);
        const entries = await s1.keys.entries({ accountId: winner, limit: 100 });
        assert.equal(entries.filter((e) => e.requestId === `redeem_${row.id}`).length, 1);
        assert.deepEqual(await s1.ledger.findViolations({ keyId: undefined, staleBefore: T0 }), []);
        process.stdout.write(`# ${dialect.name} race: 50 redeems → ${applied.length} applied, ${results.length - applied.length} used; winner ${winner}\n`);
      } finally {
        await pair.close();
      }
    });
  });
}

/** Two stores on one fresh database (two gateways), and how to remove it. */
async function openPair(dialect: 'sqlite' | 'postgres'): Promise<{ stores: readonly [Store, Store]; close(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-codes-'));
    const file = join(dir, 'test.db');
    const stores = [openSqliteStore(file), openSqliteStore(file)] as const;
    return {
      stores,
      async close() {
        for (const s of stores) await s.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const schema = await freshPgSchema();
  const first = await openPostgresStore(schema.url, { maxConnections: 10 });
  const second = await openPostgresStore(schema.url, { maxConnections: 10 });
  return {
    stores: [first, second],
    async close() {
      await first.close();
      await second.close();
      await schema.drop();
    },
  };
}
