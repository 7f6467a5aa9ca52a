// The SQLite driver, chosen by what this Node can load (docs/adr/0031-install-and-node-versions.md):
// - better-sqlite3 13 (Node-API 10: Node 22.14+, 24) everywhere it loads. better-sqlite3 12 must not be
//   used on Node 24: compiled against Node 24's headers, its objects abort the process (SIGABRT in
//   RemoveEnvironmentCleanupHook) when V8 collects one outside JavaScript, e.g. in an idle-time GC.
// - better-sqlite3 12, installed under the alias better-sqlite3-node20, where Node-API stops at 9
//   (Node 20, which is past its end of life, and 22 before 22.14): 13 crashes on load there.
// Every use of the driver, the tests' included, goes through this module.
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/** The package this Node loads. */
export const SQLITE_DRIVER = Number(process.versions.napi) >= 10 ? 'better-sqlite3' : 'better-sqlite3-node20';

let loaded: typeof BetterSqlite3 | undefined;

/** The driver's Database class, loaded on first use (a command that never opens SQLite never loads it). */
export function sqliteDriver(): typeof BetterSqlite3 {
  if (loaded) return loaded;
  try {
    loaded = createRequire(import.meta.url)(SQLITE_DRIVER) as typeof BetterSqlite3;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND' || SQLITE_DRIVER === 'better-sqlite3') throw error;
    // An optional dependency: its compile may have failed at install (no python3/make/g++ and no prebuilt binary).
    throw new Error(
      `the SQLite driver for Node ${process.versions.node} (better-sqlite3 12, compiled at install) is not installed: ` +
        'install python3, make and g++ and run npm ci again, or run Tollgate on Node 22.14+ or 24',
      { cause: error },
    );
  }
  return loaded;
}

/** An open database. */
export type SqliteDatabase = BetterSqlite3.Database;
/** Options of `new Database(file, options)`. */
export type SqliteOptions = BetterSqlite3.Options;

/** `new Database(file, options)` with the driver this Node loads. */
export function openSqliteFile(file: string, options?: SqliteOptions): SqliteDatabase {
  const Database = sqliteDriver();
  return new Database(file, options);
}
