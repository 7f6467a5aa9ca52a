// Opens the SQLite database (WAL, so the CLI can write while `serve` runs) and applies migrations.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { openSqliteFile, type SqliteDatabase } from './driver.js';
import { sqliteMigrations } from './migrations.js';

export type { SqliteDatabase };

/**
 * synchronous=NORMAL in WAL mode: a commit survives a process crash (kill -9); only an OS crash or
 * power loss can lose the last transactions. That is the trade docs/adr records for per-request speed.
 */
export function openSqlite(file: string, busyTimeoutMs: number): SqliteDatabase {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = openSqliteFile(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
  db.pragma('foreign_keys = ON');
  migrate(db);
  return db;
}

function migrate(db: SqliteDatabase): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`);
  // IMMEDIATE: two processes starting at once (serve and a CLI command) apply each migration once.
  db.transaction(() => {
    const row = db.prepare('SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations').get() as { version: number };
    for (const migration of sqliteMigrations()) {
      if (migration.version <= row.version) continue;
      db.exec(migration.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        migration.version,
        migration.name,
        new Date().toISOString(),
      );
    }
  }).immediate();
}
