// The SQLite Store: one connection shared by the three repositories.
import type { Store } from '../types.js';
import { openSqlite } from './connection.js';
import { SqliteKeyStore } from './key-store.js';
import { SqliteLedgerStore } from './ledger-store.js';
import { SqliteUsageStore } from './usage-store.js';

export function openSqliteStore(file: string): Store {
  const db = openSqlite(file);
  return {
    keys: new SqliteKeyStore(db),
    ledger: new SqliteLedgerStore(db),
    usage: new SqliteUsageStore(db),
    async close() {
      if (db.open) db.close();
    },
  };
}
