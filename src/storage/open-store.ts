// Picks the storage implementation from the configured database URL (migrating it first).
import type { Store } from './types.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';

export class UnsupportedDatabaseError extends Error {}

export function openStore(url: string): Store {
  if (url === 'sqlite::memory:') return openSqliteStore(':memory:');
  if (url.startsWith('sqlite:')) return openSqliteStore(url.slice('sqlite:'.length));
  throw new UnsupportedDatabaseError(
    `database ${url.replace(/\/\/[^@/]*@/, '//***@')}: only sqlite: is supported in this version (PostgreSQL is planned)`,
  );
}
