// The frozen migration files reach an installed gateway: the tarball `npm pack` makes (from the built
// dist/; run `npm run build` first) carries every src/storage/*/migrations/*.sql file beside the compiled
// modules, and the store modules of that unpacked package migrate a new SQLite file and a new PostgreSQL
// schema to the latest version. Skipped for PostgreSQL with the reason when unreachable (a failure under CI=true).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { openSqliteFile } from '../../src/storage/sqlite/driver.js';
import pg from 'pg';
import { freshPgSchema, postgresSkipReason } from '../support/postgres.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const DIALECTS = ['postgres', 'sqlite'] as const;
const postgresSkip = await postgresSkipReason();

function sourceMigrations(dialect: string): string[] {
  return readdirSync(join(root, 'src', 'storage', dialect, 'migrations')).filter((f) => f.endsWith('.sql')).sort();
}

interface OpenStoreModule {
  openStore(url: string): Promise<{ close(): Promise<void> }>;
}

describe('the packed gateway', () => {
  let dir: string;
  let files: string[];
  let installed: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-pack-'));
    // --ignore-scripts: the tarball of the dist/ built already (prepare would build it again).
    const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: root, encoding: 'utf8' })) as Array<{
      filename: string;
      files: Array<{ path: string }>;
    }>;
    files = packed!.files.map((f) => f.path);
    execFileSync('tar', ['-xzf', join(dir, packed!.filename), '-C', dir]);
    installed = join(dir, 'package');
    // An installed package resolves its dependencies from a node_modules beside it.
    symlinkSync(join(root, 'node_modules'), join(installed, 'node_modules'), 'dir');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  async function openStoreModule(): Promise<OpenStoreModule> {
    return (await import(pathToFileURL(join(installed, 'dist', 'storage', 'open-store.js')).href)) as OpenStoreModule;
  }

  test('carries every migration file of both dialects beside the compiled modules', () => {
    for (const dialect of DIALECTS) {
      const shipped = files.filter((f) => f.startsWith(`dist/storage/${dialect}/migrations/`)).map((f) => f.slice(f.lastIndexOf('/') + 1));
      assert.deepEqual(shipped.sort(), sourceMigrations(dialect), dialect);
    }
  });

  test('migrates a new SQLite database to the latest version', async () => {
    const file = join(dir, 'installed.db');
    const store = await (await openStoreModule()).openStore(`sqlite:${file}`);
    await store.close();
    const db = openSqliteFile(file, { readonly: true });
    try {
      const rows = db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all() as Array<{ version: number; name: string }>;
      assert.deepEqual(rows.map((r) => `${String(r.version).padStart(4, '0')}-${r.name}.sql`), sourceMigrations('sqlite'));
    } finally {
      db.close();
    }
  });

  test('migrates a new PostgreSQL schema to the latest version', { skip: postgresSkip }, async () => {
    const schema = await freshPgSchema();
    const client = new pg.Client({ connectionString: schema.url });
    try {
      const store = await (await openStoreModule()).openStore(schema.url);
      await store.close();
      await client.connect();
      const { rows } = await client.query<{ version: number; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version');
      assert.deepEqual(rows.map((r) => `${String(r.version).padStart(4, '0')}-${r.name}.sql`), sourceMigrations('postgres'));
    } finally {
      await client.end().catch(() => {});
      await schema.drop();
    }
  });
});
