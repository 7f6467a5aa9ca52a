// The storage implementations every storage test runs against: SQLite in memory, and PostgreSQL in a
// fresh schema per test (skipped with the reason when unreachable, a failure under CI=true).
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../../src/storage/types.js';
import { freshPgSchema, postgresSkipReason } from './postgres.js';

export interface StoreDialect {
  readonly name: 'sqlite' | 'postgres';
  /** Why this dialect's tests are skipped here, if they are. */
  readonly skip: string | undefined;
  /** An empty, migrated store; close() also removes what the test wrote. */
  open(): Promise<Store>;
}

const sqlite: StoreDialect = {
  name: 'sqlite',
  skip: undefined,
  open: async () => openSqliteStore(':memory:'),
};

async function postgres(): Promise<StoreDialect> {
  return {
    name: 'postgres',
    skip: await postgresSkipReason(),
    async open() {
      const schema = await freshPgSchema();
      const store = await openPostgresStore(schema.url, { maxConnections: 4 });
      return {
        ...store,
        async close() {
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
