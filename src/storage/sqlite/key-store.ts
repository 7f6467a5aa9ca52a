// API keys on SQLite. Only the secret's hash is stored.
import type { Nano } from '../../billing/money.js';
import { entryPageSql, keyPageSql, keyUpdateSql, ledgerEntryOf, type EntryRow } from '../listing-sql.js';
import { KEY_COLUMNS, keyRecordOf, limitsAssignments, serialiseAllowList, type KeyRow } from '../rows.js';
import {
  NO_KEY_LIMITS,
  type AllowedModels,
  type Credit,
  type CreditOutcome,
  type EntryPageQuery,
  type KeyChange,
  type KeyPageQuery,
  type KeyRecord,
  type KeyStore,
  type LedgerEntry,
  type LimitsPatch,
  type NewKey,
} from '../types.js';
import { CREDIT_ENTRY_EXISTS, creditRefusal, type CreditKeyRow } from '../credit-check.js';
import type { SqliteDatabase } from './connection.js';

export class SqliteKeyStore implements KeyStore {
  private readonly byHash;
  private readonly byId;
  private readonly all;
  private readonly insert;
  private readonly addBalance;
  private readonly insertEntry;
  private readonly updateModels;
  private readonly markRevoked;
  private readonly creditTx;
  private readonly updateSecret;

  constructor(private readonly db: SqliteDatabase) {
    this.byHash = db.prepare<[string], KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE secret_hash = ?`);
    this.byId = db.prepare<[string], KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`);
    this.all = db.prepare<[], KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY created_at, id`);
    this.insert = db.prepare(
      `INSERT INTO api_keys (id, name, prefix, secret_hash, allowed_models, created_at, rpm, tpm, max_concurrent, budget, budget_period, expires_at)
       VALUES (@id, @name, @prefix, @secretHash, @allowedModels, @createdAt, @rpm, @tpm, @maxConcurrent, @budget, @budgetPeriod, @expiresAt)`,
    );
    this.addBalance = db.prepare('UPDATE api_keys SET balance = balance + ? WHERE id = ?');
    this.insertEntry = db.prepare(
      "INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at) VALUES (?, ?, 'topup', ?, ?)",
    );
    this.updateModels = db.prepare('UPDATE api_keys SET allowed_models = ? WHERE id = ?');
    this.markRevoked = db.prepare("UPDATE api_keys SET status = 'revoked', revoked_at = ? WHERE id = ? AND status = 'active'");
    this.updateSecret = db.prepare<[string, string, string]>('UPDATE api_keys SET prefix = ?, secret_hash = ? WHERE id = ?');
    const keyMoney = db.prepare<[string], CreditKeyRow>('SELECT balance, held, status FROM api_keys WHERE id = ?');
    const creditEntry = db.prepare<[string, string], { found: number }>(CREDIT_ENTRY_EXISTS('?', '?'));
    const insertCredit = db.prepare<[string, string, string, number, number, string | null]>(
      'INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at, note) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (request_id, kind, seq) DO NOTHING',
    );
    // Under the IMMEDIATE transaction's write lock, the row read (balance, status) is the one the update
    // changes: a revoke from another connection is either before it (refused) or after the commit.
    this.creditTx = db.transaction((credit: Credit): CreditOutcome => {
      const refusal = creditRefusal(keyMoney.get(credit.keyId), creditEntry.get(credit.requestId, credit.kind) !== undefined, credit);
      if (refusal) return refusal;
      if (insertCredit.run(credit.keyId, credit.requestId, credit.kind, credit.amount, credit.now, credit.note).changes === 0) return 'duplicate';
      this.addBalance.run(credit.amount, credit.keyId);
      return 'applied';
    });
  }

  async page(query: KeyPageQuery): Promise<KeyRecord[]> {
    const { sql, values } = keyPageSql(KEY_COLUMNS, query, () => '?');
    return this.db.prepare<unknown[], KeyRow>(sql).all(...values).map(keyRecordOf);
  }

  async update(id: string, change: KeyChange): Promise<KeyRecord | undefined> {
    const statement = keyUpdateSql(id, change, () => '?');
    if (statement) this.db.prepare(statement.sql).run(...statement.values);
    return this.get(id);
  }

  async rotate(id: string, prefix: string, secretHash: string): Promise<KeyRecord | undefined> {
    this.updateSecret.run(prefix, secretHash, id);
    return this.get(id);
  }

  async credit(credit: Credit): Promise<CreditOutcome> {
    return this.creditTx.immediate(credit);
  }

  async entries(query: EntryPageQuery): Promise<LedgerEntry[]> {
    const { sql, values } = entryPageSql(query, () => '?');
    return this.db.prepare<unknown[], EntryRow>(sql).all(...values).map(ledgerEntryOf);
  }

  async create(key: NewKey): Promise<KeyRecord> {
    this.db
      .transaction(() => {
        this.insert.run({
          id: key.id,
          name: key.name,
          prefix: key.prefix,
          secretHash: key.secretHash,
          allowedModels: serialiseAllowList(key.allowedModels),
          createdAt: new Date(key.now).toISOString(),
          ...(key.limits ?? NO_KEY_LIMITS),
          expiresAt: key.expiresAt ?? null,
        });
        if (key.initialBalance > 0) this.applyTopUp(key.id, key.initialBalance, key.topupRequestId, key.now);
      })
      .immediate();
    return keyRecordOf(this.byId.get(key.id)!);
  }

  async findByHash(secretHash: string): Promise<KeyRecord | undefined> {
    const row = this.byHash.get(secretHash);
    return row && keyRecordOf(row);
  }

  async get(id: string): Promise<KeyRecord | undefined> {
    const row = this.byId.get(id);
    return row && keyRecordOf(row);
  }

  async list(): Promise<KeyRecord[]> {
    return this.all.all().map(keyRecordOf);
  }

  async topUp(id: string, amount: Nano, requestId: string, now: number): Promise<KeyRecord | undefined> {
    const found = this.db
      .transaction(() => (this.byId.get(id) ? (this.applyTopUp(id, amount, requestId, now), true) : false))
      .immediate();
    return found ? this.get(id) : undefined;
  }

  async setAllowedModels(id: string, models: AllowedModels): Promise<KeyRecord | undefined> {
    this.updateModels.run(serialiseAllowList(models), id);
    return this.get(id);
  }

  async setLimits(id: string, patch: LimitsPatch): Promise<KeyRecord | undefined> {
    const { sql, values } = limitsAssignments(patch, () => '?');
    if (sql) this.db.prepare(`UPDATE api_keys SET ${sql} WHERE id = ?`).run(...values, id);
    return this.get(id);
  }

  async revoke(id: string, now: number): Promise<KeyRecord | undefined> {
    this.markRevoked.run(new Date(now).toISOString(), id);
    return this.get(id);
  }

  private applyTopUp(id: string, amount: Nano, requestId: string, now: number): void {
    this.addBalance.run(amount, id);
    this.insertEntry.run(id, requestId, amount, now);
  }
}
