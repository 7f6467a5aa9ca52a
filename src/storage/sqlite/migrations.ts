// The SQLite migrations: the frozen files in ./migrations/. Money columns are INTEGER nano-dollars; times
// are epoch milliseconds unless named *_at TEXT. Never edit one that has shipped; add the next number.
import { readMigrations, type Migration } from '../migration-files.js';

let migrations: readonly Migration[] | undefined;

/** Read when a database is first opened (not when the module loads: `--version` and `--help` need none). */
export function sqliteMigrations(): readonly Migration[] {
  return (migrations ??= readMigrations(new URL('./migrations/', import.meta.url)));
}
