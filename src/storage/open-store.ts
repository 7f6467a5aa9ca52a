// Picks the storage implementation from the configured database URL (migrating it first).
import type { Store, StoreOptions } from './types.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';

export class UnsupportedDatabaseError extends Error {}

export function openStore(url: string, options: StoreOptions = {}): Store {
  if (url === 'sqlite::memory:') return openSqliteStore(':memory:', options);
  if (url.startsWith('sqlite:')) return openSqliteStore(url.slice('sqlite:'.length), options);
  throw new UnsupportedDatabaseError(
    `database ${url.replace(/\/\/[^@/]*@/, '//***@')}: only sqlite: is supported in this version (PostgreSQL is planned)`,
  );
}
