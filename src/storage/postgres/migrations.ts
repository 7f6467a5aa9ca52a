// The PostgreSQL migrations: the frozen files in ./migrations/, the same tables and columns as the SQLite
// ones (sqlite/migrations/) in PostgreSQL's types. Money columns are BIGINT nano-dollars; times are epoch
// milliseconds unless named *_at TEXT. Never edit one that has shipped; add the next number.
import { readMigrations, type Migration } from '../migration-files.js';

let migrations: readonly Migration[] | undefined;

/** Read when a PostgreSQL database is first opened (not when the module loads: a CLI start needs none). */
export function postgresMigrations(): readonly Migration[] {
  return (migrations ??= readMigrations(new URL('./migrations/', import.meta.url)));
}
