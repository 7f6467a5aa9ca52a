// The storage implementations every storage test runs against: SQLite in a temp file, and PostgreSQL in a
// fresh schema per test (skipped with the reason when unreachable, a failure under CI=true). Each opened
// store also answers raw read queries, so tests can look at the rows behind the figures.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteFile } from '../../src/storage/sqlite/driver.js';
import pg from 'pg';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../../src/storage/types.js';
import { freshPgSchema, postgresSkipReason } from './postgres.js';

export interface TestStore extends Store {
  /** A read query on the store's database, with PostgreSQL-style `$1` placeholders on both dialects. */
  query<T>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** Runs statements on the store's database from another connection (a test's fault: a trigger that fails a write). */
  execute(sql: string): Promise<void>;
}

export interface StoreDialect {
  readonly name: 'sqlite' | 'postgres';
  /** Why this dialect's tests are skipped here, if they are. */
  readonly skip: string | undefined;
  /** An empty, migrated store; close() also removes what the test wrote. */
  open(): Promise<TestStore>;
}

const sqlite: StoreDialect = {
  name: 'sqlite',
  skip: undefined,
  async open() {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-store-'));
    const file = join(dir, 'test.db');
    const store = openSqliteStore(file);
    const reader = openSqliteFile(file, { readonly: true });
    return {
      ...store,
      async query<T>(sql: string, params: readonly unknown[] = []) {
        return reader.prepare(sql.replace(/\$\d+/g, '?')).all(...params) as T[];
      },
      async execute(sql: string) {
        const writer = openSqliteFile(file);
        try {
          writer.exec(sql);
        } finally {
          writer.close();
        }
      },
      async close() {
        reader.close();
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

async function postgres(): Promise<StoreDialect> {
  return {
    name: 'postgres',
    skip: await postgresSkipReason(),
    async open() {
      const schema = await freshPgSchema();
      const store = await openPostgresStore(schema.url, { maxConnections: 4 });
      const reader = new pg.Pool({ connectionString: schema.url, max: 1 });
      return {
        ...store,
        async query<T>(sql: string, params: readonly unknown[] = []) {
          return (await reader.query(sql, params as unknown[])).rows as T[];
        },
        async execute(sql: string) {
          await reader.query(sql);
        },
        async close() {
          await reader.end();
          await store.close();
          await schema.drop();
        },
      };
    },
  };
}

export async function storeDialects(): Promise<StoreDialect[]> {
  return [sqlite, await postgres()];
}
