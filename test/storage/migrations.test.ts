// Migrations are tested with data before and after: a database at an older version, with keys, holds and
// ledger entries in it, is opened by the current code; every row survives and the ledger still adds up.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteFile } from '../../src/storage/sqlite/driver.js';
import pg from 'pg';
import { postgresMigrations } from '../../src/storage/postgres/migrations.js';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { sqliteMigrations } from '../../src/storage/sqlite/migrations.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { USAGE_COLUMNS } from '../../src/storage/rows.js';
import type { Store } from '../../src/storage/types.js';
import { freshPgSchema, postgresSkipReason, type PgSchema } from '../support/postgres.js';
import { storeDialects } from '../support/store-dialects.js';

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
    endpoint: null, errorCode: null, errorMessage: null, durationMs: null, firstTokenMs: null, sessionId: null,
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
      const old = openSqliteFile(file);
      old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT');
      old.exec(sqliteMigrations()[0]!.sql);
      old.prepare('INSERT INTO schema_migrations VALUES (1, ?, ?)').run(sqliteMigrations()[0]!.name, new Date(T0).toISOString());
      for (const sql of V1_ROWS) old.exec(sql);
      old.close();

      const store = openSqliteStore(file);
      const reader = openSqliteFile(file, { readonly: true });
      try {
        const versions = reader.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as Array<{ version: number }>;
        assert.deepEqual(versions.map((v) => v.version), sqliteMigrations().map((m) => m.version));
        await checkUpgraded(store, async () => (reader.prepare('SELECT id FROM ledger_entries ORDER BY id').all() as Array<{ id: number }>).map((r) => r.id));
      } finally {
        reader.close();
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a version-1 database with data, upgraded, has the same tables, indexes and columns as a new one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-migrate-'));
    try {
      const old = openSqliteFile(join(dir, 'old.db'));
      old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT');
      old.exec(sqliteMigrations()[0]!.sql);
      old.prepare('INSERT INTO schema_migrations VALUES (1, ?, ?)').run(sqliteMigrations()[0]!.name, new Date(T0).toISOString());
      for (const sql of V1_ROWS) old.exec(sql);
      old.close();
      const schemaOf = async (file: string) => {
        await openSqliteStore(file).close();
        const db = openSqliteFile(file, { readonly: true });
        try {
          // Each table's and index's definition as SQLite keeps it, and each table's columns as it reads them
          // (the runner's own schema_migrations aside: this test wrote the old one's CREATE on one line).
          const objects = db
            .prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' ORDER BY type, name")
            .all() as Array<{ type: string; name: string }>;
          const columns = objects.filter((o) => o.type === 'table').map((o) => [o.name, db.pragma(`table_xinfo(${o.name})`)]);
          return { objects, columns };
        } finally {
          db.close();
        }
      };
      const expected = await schemaOf(join(dir, 'new.db'));
      assert.ok(expected.objects.length > 10, 'the dump sees the schema');
      assert.deepEqual(await schemaOf(join(dir, 'old.db')), expected);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A PostgreSQL schema at version 1 (as a gateway of that version left it) holding V1_ROWS. */
async function pgVersion1WithData(): Promise<{ schema: PgSchema; client: pg.Client }> {
  const schema = await freshPgSchema();
  const client = new pg.Client({ connectionString: schema.url });
  await client.connect();
  await client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  await client.query(postgresMigrations()[0]!.sql);
  await client.query('INSERT INTO schema_migrations VALUES (1, $1, $2)', [postgresMigrations()[0]!.name, new Date(T0).toISOString()]);
  // A fresh identity column numbers the entries 1..7 in insertion order, as SQLite's rowid does.
  for (const sql of V1_ROWS) await client.query(sql);
  return { schema, client };
}

/**
 * What a schema is made of, as the catalogs describe it: each table's columns, each constraint, each index
 * and each function or procedure (its arguments, result, body and settings). The schema's own name, which
 * differs between two test schemas, is left out.
 */
async function pgSchemaOf(client: pg.Client, name: string): Promise<Record<string, unknown[]>> {
  const rows = async (sql: string) => (await client.query(sql, [name])).rows.map((row) => JSON.stringify(row).replaceAll(name, '<schema>'));
  return {
    columns: await rows(`SELECT table_name, column_name, ordinal_position, data_type, is_nullable, column_default, is_identity, identity_generation
      FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, ordinal_position`),
    constraints: await rows(`SELECT t.relname AS table_name, c.conname, c.contype, pg_get_constraintdef(c.oid) AS definition
      FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = $1 ORDER BY t.relname, c.conname`),
    indexes: await rows('SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY tablename, indexname'),
    functions: await rows(`SELECT p.proname, p.prokind, pg_get_function_identity_arguments(p.oid) AS arguments,
        pg_get_function_result(p.oid) AS result, p.prosrc, p.proconfig
      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 ORDER BY p.proname`),
  };
}

describe('migrations on PostgreSQL', { skip: await postgresSkipReason() }, () => {
  test("a start waits for another's migration of its schema, and never for another schema's", async () => {
    const [a, b] = [await freshPgSchema(), await freshPgSchema()];
    const holder = new pg.Client({ connectionString: a.url });
    await holder.connect();
    try {
      // What a gateway migrating schema a holds for the length of its migration.
      await holder.query('BEGIN');
      await holder.query("SELECT pg_advisory_xact_lock(hashtext('tollgate.schema_migrations.' || current_schema()))");
      // Schema b: not held up (it queued behind a's lock, with a 1 s lock_timeout, before).
      const other = await openPostgresStore(b.url, { maxConnections: 2, busyTimeoutMs: 200 });
      await other.close();
      // Schema a: waits past the pool's lock_timeout for the lock to go, then migrates.
      let opened = false;
      const same = openPostgresStore(a.url, { maxConnections: 2, busyTimeoutMs: 200 }).then((store) => ((opened = true), store));
      await new Promise((resolve) => setTimeout(resolve, 600));
      assert.equal(opened, false, 'still waiting for the lock');
      await holder.query('COMMIT');
      await (await same).close();
    } finally {
      await holder.end();
      await a.drop();
      await b.drop();
    }
  });

  test('a version-1 database with data opens at the latest version, every row and id intact', async () => {
    const { schema, client } = await pgVersion1WithData();
    try {
      const store = await openPostgresStore(schema.url, { maxConnections: 2 });
      try {
        const versions = await client.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
        assert.deepEqual(versions.rows.map((v) => v.version), postgresMigrations().map((m) => m.version));
        await checkUpgraded(store, async () => (await client.query<{ id: string }>('SELECT id FROM ledger_entries ORDER BY id')).rows.map((r) => Number(r.id)));
      } finally {
        await store.close();
      }
    } finally {
      await client.end();
      await schema.drop();
    }
  });

  test('a version-1 database with data, upgraded, has the same tables, columns, constraints, indexes and functions as a new one', async () => {
    const upgraded = await pgVersion1WithData();
    const fresh = await freshPgSchema();
    const freshClient = new pg.Client({ connectionString: fresh.url });
    try {
      await (await openPostgresStore(upgraded.schema.url, { maxConnections: 1 })).close();
      await (await openPostgresStore(fresh.url, { maxConnections: 1 })).close();
      await freshClient.connect();
      const expected = await pgSchemaOf(freshClient, fresh.name);
      assert.ok(expected.columns!.length > 50 && expected.indexes!.length > 5, 'the dump sees the schema');
      assert.deepEqual(await pgSchemaOf(upgraded.client, upgraded.schema.name), expected);
    } finally {
      await freshClient.end();
      await upgraded.client.end();
      await fresh.drop();
      await upgraded.schema.drop();
    }
  });

  // The gateway's one call is CALL tollgate_commit_ledger_batch (postgres/ledger-batcher.ts); the
  // per-operation functions of migrations 1 to 4 are dropped (migration 12), and nothing calls them.
  test('an upgraded database keeps only the batch function and its procedure, neither naming a dropped one', async () => {
    const { schema, client } = await pgVersion1WithData();
    try {
      await (await openPostgresStore(schema.url, { maxConnections: 1 })).close();
      const { rows } = await client.query<{ proname: string; prosrc: string }>(
        'SELECT proname, prosrc FROM pg_proc WHERE pronamespace = current_schema()::regnamespace ORDER BY proname',
      );
      assert.deepEqual(rows.map((r) => r.proname), ['tollgate_commit_ledger_batch', 'tollgate_ledger_batch']);
      for (const row of rows) assert.doesNotMatch(row.prosrc, /tollgate_(close|renew|grow)_hold/, row.proname);
    } finally {
      await client.end();
      await schema.drop();
    }
  });
});

// The runners apply every migration above the highest applied version, so a gap or a step backwards
// (two branches that picked numbers independently) would skip a migration on an existing database.
test('both dialects number their migrations 1..N in order', () => {
  assert.deepEqual(sqliteMigrations().map((m) => m.version), sqliteMigrations().map((_, i) => i + 1));
  assert.deepEqual(postgresMigrations().map((m) => m.version), postgresMigrations().map((_, i) => i + 1));
});

// rows.ts names the usage columns once (USAGE_COLUMNS): every insert, on both dialects, follows it.
for (const dialect of await storeDialects()) {
  test(`${dialect.name}: the usage columns the stores write are the usage_records table's columns`, { skip: dialect.skip }, async () => {
    const store = await dialect.open();
    try {
      const sql =
        dialect.name === 'sqlite'
          ? "SELECT name FROM pragma_table_info('usage_records')"
          : "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'usage_records'";
      // PostgreSQL's seq is its insertion order (SQLite's rowid), which no insert writes.
      const columns = (await store.query<{ name: string }>(sql)).map((c) => c.name).filter((name) => name !== 'seq');
      assert.deepEqual(columns.sort(), [...USAGE_COLUMNS].sort());
    } finally {
      await store.close();
    }
  });
}
