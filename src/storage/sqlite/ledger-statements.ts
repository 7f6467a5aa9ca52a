// The SQLite ledger's prepared statements, in one place: prepared once per database, run by the rules
// in ledger-rules.ts. Admission, the charge, the usage row and the derived figures are the SQL text
// PostgreSQL shares (rows.ts SHARED_SQL).
import { KEY_ADMISSION_COLUMNS, SHARED_SQL, USAGE_COLUMNS, type KeyAdmissionRow } from '../rows.js';
import type { SqliteDatabase } from './connection.js';

export type EntryKind = 'hold' | 'capture' | 'release';

/** A hold's key, amount and the seq of its latest 'hold' entry. */
export interface HoldRow {
  key_id: string;
  amount: number;
  seq: number;
}

interface Figures {
  balance: number;
  held: number;
  spent: number;
}

export function prepareLedgerStatements(db: SqliteDatabase) {
  return {
    // Admission: the one conditional UPDATE (the same SQL as on PostgreSQL).
    admit: db.prepare<{ amount: number; keyId: string; now: number; periodStart: number; budget: number | null }>(
      SHARED_SQL.admit('@amount', '@keyId', '@now', '@periodStart', '@budget'),
    ),
    keyState: db.prepare<[string], KeyAdmissionRow>(`SELECT ${KEY_ADMISSION_COLUMNS} FROM api_keys WHERE id = ?`),
    insertHold: db.prepare(
      `INSERT INTO holds (request_id, key_id, amount, status, expires_at, created_at)
       VALUES (@requestId, @keyId, @amount, 'active', @expiresAt, @now)`,
    ),
    entry: db.prepare<[string, string, EntryKind, number, number, number]>(
      'INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at, seq) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    closeHold: db.prepare<[string, number, string, string], HoldRow>(
      'UPDATE holds SET status = ?, settled_at = ? WHERE request_id = ? AND status = ? RETURNING key_id, amount, seq',
    ),
    holdState: db.prepare<[string], HoldRow & { status: string }>('SELECT key_id, amount, seq, status FROM holds WHERE request_id = ?'),
    holdExists: db.prepare<[string], { status: string }>('SELECT status FROM holds WHERE request_id = ?'),
    charge: db.prepare<{ cost: number; unheld: number; periodStart: number; keyId: string }>(
      SHARED_SQL.charge('@cost', '@unheld', '@periodStart', '@keyId'),
    ),
    unhold: db.prepare<[number, string]>('UPDATE api_keys SET held = held - ? WHERE id = ?'),
    insertUsage: db.prepare(SHARED_SQL.insertUsage(USAGE_COLUMNS.map(() => '?'))),
    extend: db.prepare<[number, string]>("UPDATE holds SET expires_at = ? WHERE request_id = ? AND status = 'active'"),
    grow: db.prepare<[number, string]>("UPDATE holds SET amount = amount + ?, seq = seq + 1 WHERE request_id = ? AND status = 'active'"),
    reactivate: db.prepare<[number, number, string]>(
      "UPDATE holds SET status = 'active', seq = ?, expires_at = ?, settled_at = NULL WHERE request_id = ? AND status = 'expired'",
    ),
    expired: db.prepare<[number, number], { request_id: string }>(
      "SELECT request_id FROM holds WHERE status = 'active' AND expires_at <= ? ORDER BY expires_at LIMIT ?",
    ),
    cachedFigures: db.prepare<[string], Figures>('SELECT balance, held, spent FROM api_keys WHERE id = ?'),
    derivedFigures: db.prepare<[string], Figures>(SHARED_SQL.derivedFigures('?')),
    activeCount: db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM holds WHERE key_id = ? AND status = 'active'"),
  };
}

export type LedgerStatements = ReturnType<typeof prepareLedgerStatements>;
