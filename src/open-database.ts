// Opens the configured store for `serve` and every command, with a failure explained in one line.
import { databaseError } from './startup-error.js';
import { openStore, UnsupportedDatabaseError } from './storage/open-store.js';
import type { Store, StoreOptions } from './storage/types.js';

/** openStore; a database that cannot be opened is a StartupError naming why (PostgreSQL's failures already are one line). */
export async function openDatabase(url: string, options?: StoreOptions): Promise<Store> {
  try {
    return await openStore(url, options);
  } catch (error) {
    throw error instanceof UnsupportedDatabaseError ? error : databaseError(url, error);
  }
}
