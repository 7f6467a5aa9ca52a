// Picks the storage implementation from the configured database URL (migrating it first).
import { redactDatabaseUrl, UnsupportedDatabaseError } from './database-url.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { Store, StoreOptions } from './types.js';

export { UnsupportedDatabaseError };

export async function openStore(url: string, options: StoreOptions = {}): Promise<Store> {
  if (url === 'sqlite::memory:') return openSqliteStore(':memory:', options);
  if (url.startsWith('sqlite:')) return openSqliteStore(url.slice('sqlite:'.length), options);
  if (/^postgres(ql)?:\/\//.test(url)) {
    // Loaded only when configured: SQLite users (and every CLI start) skip the driver.
    const { openPostgresStore } = await import('./postgres/postgres-store.js');
    try {
      return await openPostgresStore(url, options);
    } catch (error) {
      throw new UnsupportedDatabaseError(`database ${redactDatabaseUrl(url)}: ${(error as Error).message}`, { cause: error });
    }
  }
  throw new UnsupportedDatabaseError(`database ${redactDatabaseUrl(url)}: expected sqlite:PATH or postgres://...`);
}
