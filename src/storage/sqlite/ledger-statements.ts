// The SQLite ledger's prepared statements, in one place: prepared once per database, run by the rules
// in ledger-rules.ts. Admission, the charge, the usage row and the derived figures are the SQL text
// PostgreSQL shares (rows.ts SHARED_SQL).
import {
  ACCOUNT_ADMISSION_COLUMNS,
  KEY_ADMISSION_COLUMNS,
  SHARED_SQL,
  USAGE_COLUMNS,
  type AccountAdmissionRow,
  type KeyAdmissionRow,
} from '../rows.js';
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

interface Admit {
  amount: number;
  keyId: string;
  now: number;
  periodStart: number;
  budget: number | null;
}

export function prepareLedgerStatements(db: SqliteDatabase) {
  return {
    // Admission: the key's conditional UPDATE, then its account's (rules.admit runs both as one step).
    admitKey: db.prepare<Admit, { account_id: string }>(SHARED_SQL.admitKey('@amount', '@keyId', '@now', '@periodStart', '@budget')),
    admitAccount: db.prepare<{ amount: number; accountId: string; periodStart: number; budget: number | null }>(
      SHARED_SQL.admitAccount('@amount', '@accountId', '@periodStart', '@budget'),
    ),
    keyState: db.prepare<[string], KeyAdmissionRow>(`SELECT ${KEY_ADMISSION_COLUMNS} FROM api_keys WHERE id = ?`),
    accountState: db.prepare<[string], AccountAdmissionRow>(`SELECT ${ACCOUNT_ADMISSION_COLUMNS} FROM accounts WHERE id = ?`),
    insertHold: db.prepare(
      `INSERT INTO holds (request_id, key_id, amount, status, expires_at, created_at)
       VALUES (@requestId, @keyId, @amount, 'active', @expiresAt, @now)`,
    ),
    entry: db.prepare<[string, string, string, EntryKind, number, number, number]>(
      'INSERT INTO ledger_entries (account_id, key_id, request_id, kind, amount, created_at, seq) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    closeHold: db.prepare<[string, number, string, string], HoldRow>(
      'UPDATE holds SET status = ?, settled_at = ? WHERE request_id = ? AND status = ? RETURNING key_id, amount, seq',
    ),
    holdState: db.prepare<[string], HoldRow & { status: string }>('SELECT key_id, amount, seq, status FROM holds WHERE request_id = ?'),
    holdExists: db.prepare<[string], { status: string }>('SELECT status FROM holds WHERE request_id = ?'),
    chargeKey: db.prepare<{ cost: number; unheld: number; periodStart: number; keyId: string }, { account_id: string }>(
      SHARED_SQL.chargeKey('@cost', '@unheld', '@periodStart', '@keyId'),
    ),
    chargeAccount: db.prepare<{ cost: number; unheld: number; periodStart: number; accountId: string }>(
      SHARED_SQL.chargeAccount('@cost', '@unheld', '@periodStart', '@accountId'),
    ),
    unholdKey: db.prepare<[number, string], { account_id: string }>('UPDATE api_keys SET held = held - ? WHERE id = ? RETURNING account_id'),
    unholdAccount: db.prepare<[number, string]>('UPDATE accounts SET held = held - ? WHERE id = ?'),
    insertUsage: db.prepare(SHARED_SQL.insertUsage(USAGE_COLUMNS.map(() => '?'))),
    extend: db.prepare<[number, string]>("UPDATE holds SET expires_at = ? WHERE request_id = ? AND status = 'active'"),
    grow: db.prepare<[number, string]>("UPDATE holds SET amount = amount + ?, seq = seq + 1 WHERE request_id = ? AND status = 'active'"),
    reactivate: db.prepare<[number, number, string]>(
      "UPDATE holds SET status = 'active', seq = ?, expires_at = ?, settled_at = NULL WHERE request_id = ? AND status = 'expired'",
    ),
    expired: db.prepare<[number, number], { request_id: string }>(
      "SELECT request_id FROM holds WHERE status = 'active' AND expires_at <= ? ORDER BY expires_at LIMIT ?",
    ),
    cachedFigures: db.prepare<[string], Figures>('SELECT a.balance, k.held, k.spent FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.id = ?'),
    derivedKeyFigures: db.prepare<[string], Omit<Figures, 'balance'>>(SHARED_SQL.derivedKeyFigures('?')),
    derivedAccountFigures: db.prepare<[string], Figures>(SHARED_SQL.derivedAccountFigures('?')),
    activeCount: db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM holds WHERE key_id = ? AND status = 'active'"),
  };
}

export type LedgerStatements = ReturnType<typeof prepareLedgerStatements>;
