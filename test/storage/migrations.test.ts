// Migrations are tested with data before and after: a database at an older version, with keys, holds and
// ledger entries in it, is opened by the current code; every row survives and the ledger still adds up.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { POSTGRES_MIGRATIONS } from '../../src/storage/postgres/migrations.js';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { SQLITE_MIGRATIONS } from '../../src/storage/sqlite/migrations.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../../src/storage/types.js';
import { freshPgSchema, postgresSkipReason } from '../support/postgres.js';

const T0 = 1_750_000_000_000;

/** Version-1 rows: a key with $10, one captured request, one active hold, one expired hold. */
const V1_ROWS = [
  `INSERT INTO api_keys (id, name, prefix, secret_hash, balance, held, spent, allowed_models, status, created_at)
     VALUES ('key_a', 'old', 'tg-abc', 'hash-a', 9999999700, 500, 300, '*', 'active', '2025-01-01T00:00:00.000Z')`,
  `INSERT INTO holds (request_id, key_id, amount, status, expires_at, created_at, settled_at) VALUES
     ('r-done', 'key_a', 1000, 'captured', ${T0 + 600_000}, ${T0}, ${T0 + 5}),
     ('r-live', 'key_a', 500, 'active', ${T0 + 600_000}, ${T0}, NULL),
     ('r-gone', 'key_a', 700, 'expired', ${T0 + 10}, ${T0}, ${T0 + 20})`,
  `INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at) VALUES
     ('key_a', 'topup-1', 'topup', 10000000000, ${T0}),
     ('key_a', 'r-done', 'hold', 1000, ${T0}),
     ('key_a', 'r-live', 'hold', 500, ${T0}),
     ('key_a', 'r-gone', 'hold', 700, ${T0}),
     ('key_a', 'r-done', 'release', 1000, ${T0 + 5}),
     ('key_a', 'r-done', 'capture', 300, ${T0 + 5}),
     ('key_a', 'r-gone', 'release', 700, ${T0 + 20})`,
];

async function checkUpgraded(store: Store, entryIds: () => Promise<number[]>): Promise<void> {
  const key = (await store.keys.get('key_a'))!;
  assert.deepEqual({ balance: key.balance, held: key.held, spent: key.spent }, { balance: 9_999_999_700, held: 500, spent: 300 });
  const audit = await store.ledger.audit('key_a');
  assert.deepEqual(audit.cached, audit.derived, 'the ledger still adds up');
  assert.equal(audit.activeHolds, 1);
  assert.deepEqual(await entryIds(), [1, 2, 3, 4, 5, 6, 7], 'every entry kept its id');
  // The old rows work with the new code: the live hold settles, the expired one is re-admitted.
  const usage = {
    requestId: 'r-live', time: T0, keyId: 'key_a', model: 'm', provider: 'p', upstreamModel: 'u', status: 200,
    inputTokens: 1, cachedInputTokens: 0, outputTokens: 1, reasoningTokens: 0, cost: 200, usageSource: 'upstream' as const, attempts: [],
    endpoint: null, errorCode: null, errorMessage: null, durationMs: null, firstTokenMs: null,
  };
  assert.deepEqual(await store.ledger.settle({ requestId: 'r-live', cost: 200, usage, now: T0 + 30, budget: { limit: null, periodStart: 0 } }), { outcome: 'captured', charged: 200 });
  assert.deepEqual(await store.ledger.renewHold({ requestId: 'r-gone', expiresAt: T0 + 900_000, now: T0 + 40, budget: { limit: null, periodStart: 0 } }), { outcome: 'readmitted' });
  const after = await store.ledger.audit('key_a');
  assert.deepEqual(after.cached, after.derived);
  assert.deepEqual(after.cached, { balance: 9_999_999_500, held: 700, spent: 500 });
}

describe('migrations on SQLite', () => {
  test('a version-1 database with data opens at the latest version, every row and id intact', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-migrate-'));
    const file = join(dir, 'old.db');
    try {
      const old = new Database(file);
      old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT');
      old.exec(SQLITE_MIGRATIONS[0]!.sql);
      old.prepare('INSERT INTO schema_migrations VALUES (1, ?, ?)').run(SQLITE_MIGRATIONS[0]!.name, new Date(T0).toISOString());
      for (const sql of V1_ROWS) old.exec(sql);
      old.close();

      const store = openSqliteStore(file);
      const reader = new Database(file, { readonly: true });
      try {
        const versions = reader.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as Array<{ version: number }>;
        assert.deepEqual(versions.map((v) => v.version), SQLITE_MIGRATIONS.map((m) => m.version));
        await checkUpgraded(store, async () => (reader.prepare('SELECT id FROM ledger_entries ORDER BY id').all() as Array<{ id: number }>).map((r) => r.id));
      } finally {
        reader.close();
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('migrations on PostgreSQL', { skip: await postgresSkipReason() }, () => {
  test('a version-1 database with data opens at the latest version, every row and id intact', async () => {
    const schema = await freshPgSchema();
    const client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    try {
      await client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
      await client.query(POSTGRES_MIGRATIONS[0]!.sql);
      await client.query('INSERT INTO schema_migrations VALUES (1, $1, $2)', [POSTGRES_MIGRATIONS[0]!.name, new Date(T0).toISOString()]);
      // A fresh identity column numbers the entries 1..7 in insertion order, as SQLite's rowid does.
      for (const sql of V1_ROWS) await client.query(sql);
      const store = await openPostgresStore(schema.url, { maxConnections: 2 });
      try {
        const versions = await client.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
        assert.deepEqual(versions.rows.map((v) => v.version), POSTGRES_MIGRATIONS.map((m) => m.version));
        await checkUpgraded(store, async () => (await client.query<{ id: string }>('SELECT id FROM ledger_entries ORDER BY id')).rows.map((r) => Number(r.id)));
      } finally {
        await store.close();
      }
    } finally {
      await client.end();
      await schema.drop();
    }
  });
});

// The runners apply every migration above the highest applied version, so a gap or a step backwards
// (two branches that picked numbers independently) would skip a migration on an existing database.
test('both dialects number their migrations 1..N in order', () => {
  assert.deepEqual(SQLITE_MIGRATIONS.map((m) => m.version), SQLITE_MIGRATIONS.map((_, i) => i + 1));
  assert.deepEqual(POSTGRES_MIGRATIONS.map((m) => m.version), POSTGRES_MIGRATIONS.map((_, i) => i + 1));
});
