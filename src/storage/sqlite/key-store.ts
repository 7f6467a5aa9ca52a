// API keys on SQLite. Only the secret's hash is stored.
import type { Nano } from '../../billing/money.js';
import { KEY_COLUMNS, keyRecordOf, limitsAssignments, serialiseAllowList, type KeyRow } from '../rows.js';
import { NO_KEY_LIMITS, type AllowedModels, type KeyRecord, type KeyStore, type LimitsPatch, type NewKey } from '../types.js';
import type { SqliteDatabase } from './connection.js';

export class SqliteKeyStore implements KeyStore {
  private readonly byHash;
  private readonly byId;
  private readonly all;
  private readonly insert;
  private readonly credit;
  private readonly insertEntry;
  private readonly updateModels;
  private readonly markRevoked;

  constructor(private readonly db: SqliteDatabase) {
    this.byHash = db.prepare<[string], KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE secret_hash = ?`);
    this.byId = db.prepare<[string], KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`);
    this.all = db.prepare<[], KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY created_at, id`);
    this.insert = db.prepare(
      `INSERT INTO api_keys (id, name, prefix, secret_hash, allowed_models, created_at, rpm, tpm, max_concurrent, budget, budget_period, expires_at)
       VALUES (@id, @name, @prefix, @secretHash, @allowedModels, @createdAt, @rpm, @tpm, @maxConcurrent, @budget, @budgetPeriod, @expiresAt)`,
    );
    this.credit = db.prepare('UPDATE api_keys SET balance = balance + ? WHERE id = ?');
    this.insertEntry = db.prepare(
      "INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at) VALUES (?, ?, 'topup', ?, ?)",
    );
    this.updateModels = db.prepare('UPDATE api_keys SET allowed_models = ? WHERE id = ?');
    this.markRevoked = db.prepare("UPDATE api_keys SET status = 'revoked', revoked_at = ? WHERE id = ? AND status = 'active'");
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
    this.credit.run(amount, id);
    this.insertEntry.run(id, requestId, amount, now);
  }
}
