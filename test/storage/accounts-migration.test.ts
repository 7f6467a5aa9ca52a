// The accounts migration (SQLite 11, PostgreSQL 15; docs/adr/0047-accounts.md) on a database with data:
// one at the previous version holding keys (one whose id does not start with key_), top-ups, an
// adjustment, holds of every status (active, grown, captured, released, expired, expired and renewed),
// their entries and usage rows, every old invariant checked first. After the migration every key has its
// personal account holding exactly its old balance, held and spent; the key still shows them; every entry
// kept its id and names the account; the audit finds nothing; and the old rows work with the new code.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import pg from 'pg';
import { postgresMigrations } from '../../src/storage/postgres/migrations.js';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { personalAccountId, USAGE_COLUMNS, usageValues } from '../../src/storage/rows.js';
import { openSqliteFile } from '../../src/storage/sqlite/driver.js';
import { sqliteMigrations } from '../../src/storage/sqlite/migrations.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../../src/storage/types.js';
import { freshPgSchema, postgresSkipReason } from '../support/postgres.js';
import { testUsage } from '../support/usage-fixture.js';

const T0 = 1_750_000_000_000;
/** The last version before accounts. */
const BEFORE = { sqlite: 10, postgres: 14 } as const;

interface OldKey {
  readonly id: string;
  readonly name: string;
  balance: number;
  held: number;
  spent: number;
}

interface OldEntry {
  readonly keyId: string;
  readonly requestId: string;
  readonly kind: string;
  readonly amount: number;
  readonly seq: number;
}

interface OldHold {
  readonly requestId: string;
  readonly keyId: string;
  readonly amount: number;
  readonly status: string;
  readonly expiresAt: number;
  readonly seq: number;
}

/**
 * What a gateway of the previous version would have left: each key's figures as its entries make them,
 * the entries interleaved between keys (so ids interleave), a usage row for each request that ended.
 */
function oldData() {
  const keys: OldKey[] = ['key_00a1', 'key_00b2', 'key_00c3', 'legacy-key'].map((id, i) => ({ id, name: `old ${i}`, balance: 0, held: 0, spent: 0 }));
  const entries: OldEntry[] = [];
  const holds: OldHold[] = [];
  const usage: Array<{ requestId: string; keyId: string; cost: number }> = [];
  const entry = (key: OldKey, requestId: string, kind: string, amount: number, seq = 0) => {
    entries.push({ keyId: key.id, requestId, kind, amount, seq });
    if (kind === 'topup' || kind === 'adjust') key.balance += amount;
    if (kind === 'capture') {
      key.balance -= amount;
      key.spent += amount;
    }
    if (kind === 'hold') key.held += amount;
    if (kind === 'release') key.held -= amount;
  };
  // Round-robin over the keys, one step each at a time.
  const steps: Array<(key: OldKey, n: number) => void> = [
    (k, n) => entry(k, `topup-${k.id}`, 'topup', 1_000_000 * (n + 1)),
    (k) => {
      entry(k, `cap-${k.id}`, 'hold', 30_000);
      entry(k, `cap-${k.id}`, 'release', 30_000);
      entry(k, `cap-${k.id}`, 'capture', 21_000);
      holds.push({ requestId: `cap-${k.id}`, keyId: k.id, amount: 30_000, status: 'captured', expiresAt: T0 + 600_000, seq: 0 });
      usage.push({ requestId: `cap-${k.id}`, keyId: k.id, cost: 21_000 });
    },
    (k) => {
      entry(k, `live-${k.id}`, 'hold', 40_000);
      holds.push({ requestId: `live-${k.id}`, keyId: k.id, amount: 40_000, status: 'active', expiresAt: T0 + 600_000, seq: 0 });
    },
    (k) => {
      entry(k, `rel-${k.id}`, 'hold', 5_000);
      entry(k, `rel-${k.id}`, 'release', 5_000);
      holds.push({ requestId: `rel-${k.id}`, keyId: k.id, amount: 5_000, status: 'released', expiresAt: T0 + 600_000, seq: 0 });
      usage.push({ requestId: `rel-${k.id}`, keyId: k.id, cost: 0 });
    },
    (k, n) => {
      if (n % 2 === 0) entry(k, `adj-${k.id}`, 'adjust', -7_000);
      entry(k, `gone-${k.id}`, 'hold', 9_000);
      entry(k, `gone-${k.id}`, 'release', 9_000);
      holds.push({ requestId: `gone-${k.id}`, keyId: k.id, amount: 9_000, status: 'expired', expiresAt: T0 + 10, seq: 0 });
    },
    (k) => {
      // Grown once, still active.
      entry(k, `grown-${k.id}`, 'hold', 2_000);
      entry(k, `grown-${k.id}`, 'hold', 3_000, 1);
      holds.push({ requestId: `grown-${k.id}`, keyId: k.id, amount: 5_000, status: 'active', expiresAt: T0 + 600_000, seq: 1 });
    },
    (k) => {
      // Expired, renewed, then captured.
      entry(k, `renewed-${k.id}`, 'hold', 8_000);
      entry(k, `renewed-${k.id}`, 'release', 8_000);
      entry(k, `renewed-${k.id}`, 'hold', 8_000, 1);
      entry(k, `renewed-${k.id}`, 'release', 8_000, 1);
      entry(k, `renewed-${k.id}`, 'capture', 6_500);
      holds.push({ requestId: `renewed-${k.id}`, keyId: k.id, amount: 8_000, status: 'captured', expiresAt: T0 + 600_000, seq: 1 });
      usage.push({ requestId: `renewed-${k.id}`, keyId: k.id, cost: 6_500 });
    },
  ];
  for (const step of steps) keys.forEach((key, n) => step(key, n));
  return { keys, entries, holds, usage };
}

type Exec = (sql: string, params?: readonly unknown[]) => Promise<Array<Record<string, unknown>>>;

/** Writes the old rows with `$n` placeholders (the caller's dialect rewrites them). */
async function writeOld(exec: Exec, data: ReturnType<typeof oldData>): Promise<void> {
  for (const k of data.keys) {
    await exec(
      `INSERT INTO api_keys (id, name, prefix, secret_hash, balance, held, spent, allowed_models, status, created_at)
       VALUES ($1, $2, 'tg-old', $3, $4, $5, $6, '*', 'active', $7)`,
      [k.id, k.name, `hash-${k.id}`, k.balance, k.held, k.spent, new Date(T0).toISOString()],
    );
  }
  for (const h of data.holds) {
    await exec('INSERT INTO holds (request_id, key_id, amount, status, expires_at, created_at, settled_at, seq) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)', [
      h.requestId,
      h.keyId,
      h.amount,
      h.status,
      h.expiresAt,
      T0,
      h.status === 'active' ? null : T0 + 20,
      h.seq,
    ]);
  }
  for (const e of data.entries) {
    await exec('INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at, seq) VALUES ($1, $2, $3, $4, $5, $6)', [
      e.keyId,
      e.requestId,
      e.kind,
      e.amount,
      T0,
      e.seq,
    ]);
  }
  for (const u of data.usage) {
    const values = usageValues(testUsage(u.requestId, u.cost, { keyId: u.keyId, time: T0 + 20 }));
    await exec(`INSERT INTO usage_records (${USAGE_COLUMNS.join(', ')}) VALUES (${USAGE_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`, values);
  }
}

const n = (value: unknown) => Number(value);

/** The old invariants: each key's cached figures are those its entries make, its held that of its active holds. */
async function checkOldInvariants(exec: Exec, data: ReturnType<typeof oldData>): Promise<void> {
  const rows = await exec(`SELECT k.id, k.balance, k.held, k.spent,
      (SELECT CAST(COALESCE(SUM(CASE e.kind WHEN 'topup' THEN e.amount WHEN 'adjust' THEN e.amount WHEN 'capture' THEN -e.amount ELSE 0 END), 0) AS BIGINT) FROM ledger_entries e WHERE e.key_id = k.id) AS d_balance,
      (SELECT CAST(COALESCE(SUM(CASE e.kind WHEN 'hold' THEN e.amount WHEN 'release' THEN -e.amount ELSE 0 END), 0) AS BIGINT) FROM ledger_entries e WHERE e.key_id = k.id) AS d_held,
      (SELECT CAST(COALESCE(SUM(CASE e.kind WHEN 'capture' THEN e.amount ELSE 0 END), 0) AS BIGINT) FROM ledger_entries e WHERE e.key_id = k.id) AS d_spent,
      (SELECT CAST(COALESCE(SUM(h.amount), 0) AS BIGINT) FROM holds h WHERE h.key_id = k.id AND h.status = 'active') AS active
    FROM api_keys k ORDER BY k.id`);
  assert.equal(rows.length, data.keys.length);
  for (const row of rows) {
    const key = data.keys.find((k) => k.id === row.id)!;
    assert.deepEqual(
      [n(row.balance), n(row.held), n(row.spent)],
      [key.balance, key.held, key.spent],
      `${key.id}: the rows hold the figures written`,
    );
    assert.deepEqual([n(row.d_balance), n(row.d_held), n(row.d_spent), n(row.active)], [key.balance, key.held, key.spent, key.held], `${key.id}: old invariants`);
  }
  assert.ok(data.keys.every((k) => k.held > 0 && k.spent > 0 && k.balance > 0));
}

/** The rows after the migration, through the new store and the raw tables. */
async function checkMigrated(store: Store, exec: Exec, data: ReturnType<typeof oldData>, entryIdsBefore: Array<Record<string, unknown>>): Promise<void> {
  for (const old of data.keys) {
    const accountId = personalAccountId(old.id);
    assert.equal(accountId, old.id.startsWith('key_') ? `acct_${old.id.slice(4)}` : `acct_${old.id}`);
    const account = (await store.accounts.get(accountId))!;
    assert.ok(account, `${old.id} has its personal account ${accountId}`);
    assert.deepEqual(
      { balance: account.balance, held: account.held, spent: account.spent, personal: account.personal, name: account.name, status: account.status },
      { balance: old.balance, held: old.held, spent: old.spent, personal: true, name: old.name, status: 'active' },
    );
    const key = (await store.keys.get(old.id))!;
    assert.deepEqual(
      { balance: key.balance, held: key.held, spent: key.spent, accountId: key.accountId, creditLimit: key.creditLimit },
      { balance: old.balance, held: old.held, spent: old.spent, accountId, creditLimit: null },
    );
    const audit = await store.ledger.audit(old.id);
    assert.deepEqual(audit.cached, audit.derived, `${old.id}: the ledger still adds up`);
    assert.deepEqual((await store.accounts.keys(accountId)).map((k) => k.id), [old.id]);
  }
  const entries = await exec('SELECT id, account_id, key_id, request_id, kind, amount, seq FROM ledger_entries ORDER BY id');
  assert.deepEqual(
    entries.map((e) => [n(e.id), e.key_id, e.request_id, e.kind, n(e.amount), n(e.seq)]),
    entryIdsBefore.map((e) => [n(e.id), e.key_id, e.request_id, e.kind, n(e.amount), n(e.seq)]),
    'every entry kept its id and its fields',
  );
  for (const e of entries) assert.equal(e.account_id, personalAccountId(String(e.key_id)), `entry ${n(e.id)} names its key's account`);
  assert.deepEqual(await store.ledger.findViolations({ keyId: undefined, staleBefore: T0 }), []);

  // The old rows work with the new code: a live hold settles, a grown one is released, the expired one is
  // re-admitted, an account is credited; the audit still finds nothing.
  const key = data.keys[0]!;
  const usage = testUsage(`live-${key.id}`, 12_000, { keyId: key.id, time: T0 + 30 });
  assert.deepEqual(await store.ledger.settle({ requestId: `live-${key.id}`, cost: 12_000, usage, now: T0 + 30, budget: { limit: null, periodStart: 0 } }), {
    outcome: 'captured',
    charged: 12_000,
  });
  assert.equal(await store.ledger.release(`grown-${key.id}`, undefined, T0 + 30), 'released');
  assert.deepEqual(await store.ledger.renewHold({ requestId: `gone-${key.id}`, expiresAt: T0 + 900_000, now: T0 + 40, budget: { limit: null, periodStart: 0 } }), {
    outcome: 'readmitted',
  });
  assert.equal(await store.accounts.credit({ accountId: personalAccountId(key.id), kind: 'topup', amount: 1_000, requestId: 'topup-after', now: T0 + 50, note: null }), 'applied');
  const account = (await store.accounts.get(personalAccountId(key.id)))!;
  assert.deepEqual(
    { balance: account.balance, held: account.held, spent: account.spent },
    { balance: key.balance - 12_000 + 1_000, held: key.held - 40_000 - 5_000 + 9_000, spent: key.spent + 12_000 },
  );
  assert.deepEqual(await store.ledger.findViolations({ keyId: undefined, staleBefore: T0 }), []);
}

const ENTRY_COLUMNS = 'SELECT id, key_id, request_id, kind, amount, seq FROM ledger_entries ORDER BY id';

describe('the accounts migration on SQLite', () => {
  test(`a version-${BEFORE.sqlite} database with keys, holds, entries and usage: each key's money moves to its personal account, every figure and id kept`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-accounts-migrate-'));
    const file = join(dir, 'old.db');
    const data = oldData();
    try {
      const old = openSqliteFile(file);
      const exec: Exec = async (sql, params = []) => {
        const statement = old.prepare(sql.replace(/\$\d+/g, '?'));
        return statement.reader ? (statement.all(...params) as Array<Record<string, unknown>>) : (statement.run(...params), []);
      };
      old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT');
      for (const migration of sqliteMigrations().filter((m) => m.version <= BEFORE.sqlite)) {
        old.exec(migration.sql);
        old.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(migration.version, migration.name, new Date(T0).toISOString());
      }
      await writeOld(exec, data);
      await checkOldInvariants(exec, data);
      const before = await exec(ENTRY_COLUMNS);
      old.close();

      const store = openSqliteStore(file);
      const reader = openSqliteFile(file, { readonly: true });
      try {
        const read: Exec = async (sql, params = []) => reader.prepare(sql.replace(/\$\d+/g, '?')).all(...params) as Array<Record<string, unknown>>;
        const versions = await read('SELECT version FROM schema_migrations ORDER BY version');
        assert.deepEqual(versions.map((v) => n(v.version)), sqliteMigrations().map((m) => m.version));
        await checkMigrated(store, read, data, before);
      } finally {
        reader.close();
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the accounts migration on PostgreSQL', { skip: await postgresSkipReason() }, () => {
  test(`a version-${BEFORE.postgres} database with keys, holds, entries and usage: each key's money moves to its personal account, every figure and id kept`, async () => {
    const schema = await freshPgSchema();
    const client = new pg.Client({ connectionString: schema.url });
    const data = oldData();
    await client.connect();
    try {
      const exec: Exec = async (sql, params = []) => (await client.query(sql, params as unknown[])).rows as Array<Record<string, unknown>>;
      await client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
      for (const migration of postgresMigrations().filter((m) => m.version <= BEFORE.postgres)) {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations VALUES ($1, $2, $3)', [migration.version, migration.name, new Date(T0).toISOString()]);
      }
      await writeOld(exec, data);
      await checkOldInvariants(exec, data);
      const before = await exec(ENTRY_COLUMNS);

      const store = await openPostgresStore(schema.url, { maxConnections: 2 });
      try {
        const versions = await exec('SELECT version FROM schema_migrations ORDER BY version');
        assert.deepEqual(versions.map((v) => n(v.version)), postgresMigrations().map((m) => m.version));
        const nulls = await exec("SELECT is_nullable FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'ledger_entries' AND column_name IN ('account_id', 'key_id') ORDER BY column_name");
        assert.deepEqual(nulls.map((c) => c.is_nullable), ['NO', 'YES'], 'entries name their account always, their key when they have one');
        await checkMigrated(store, exec, data, before);
      } finally {
        await store.close();
      }
    } finally {
      await client.end();
      await schema.drop();
    }
  });
});
