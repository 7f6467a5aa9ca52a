// API keys on SQLite. Only the secret's hash is stored. A request that holds may reuse a key row this
// process read within the last second (docs/adr/0027-recent-key-rows.md): the hold's admission re-checks
// the key in the database. Any change this process makes to a key or an account forgets those rows, and so
// does any commit another process (a CLI command, another worker) made to the file since the last lookup:
// SQLite's data_version says so for the price of one pragma.
import type { Nano } from '../../billing/money.js';
import { entryPageSql, keyPageSql, keyUpdateSql, ledgerEntryOf, type EntryRow } from '../listing-sql.js';
import { KEY_COLUMNS, KEY_FROM, keyRecordOf, personalAccountId, limitsAssignments, serialiseAllowList, type KeyRow } from '../rows.js';
import {
  NO_KEY_LIMITS,
  type AllowedModels,
  type EntryPageQuery,
  type KeyChange,
  type KeyPageQuery,
  type KeyRecord,
  type KeyStore,
  type LedgerEntry,
  type LimitsPatch,
  type NewKey,
} from '../types.js';
import { prepareAccountWrites } from './account-store.js';
import type { SqliteDatabase } from './connection.js';
import { RecentKeys } from '../recent-keys.js';
import { prepareWebhookInsert } from './webhook-store.js';

export class SqliteKeyStore implements KeyStore {
  private readonly byHash;
  private readonly byId;
  private readonly all;
  private readonly insert;
  private readonly accountWrites;
  private readonly accountOf;
  private readonly updateModels;
  private readonly markRevoked;
  private readonly updateSecret;
  private readonly recent = new RecentKeys();
  /** PRAGMA data_version: changes when another connection (process) has committed to the file. */
  private readonly dataVersion;
  private seenVersion = -1;
  private readonly revokeTx;

  constructor(private readonly db: SqliteDatabase) {
    this.byHash = db.prepare<[string], KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEY_FROM} WHERE k.secret_hash = ?`);
    this.byId = db.prepare<[string], KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEY_FROM} WHERE k.id = ?`);
    this.all = db.prepare<[], KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEY_FROM} ORDER BY k.created_at, k.id`);
    this.insert = db.prepare(
      `INSERT INTO api_keys (id, account_id, credit_limit, name, prefix, secret_hash, allowed_models, created_at, rpm, tpm, max_concurrent, budget, budget_period, expires_at)
       VALUES (@id, @accountId, @creditLimit, @name, @prefix, @secretHash, @allowedModels, @createdAt, @rpm, @tpm, @maxConcurrent, @budget, @budgetPeriod, @expiresAt)`,
    );
    this.dataVersion = db.prepare<[], { data_version: number }>('PRAGMA data_version');
    this.accountWrites = prepareAccountWrites(db);
    this.accountOf = db.prepare<[string], { account_id: string }>('SELECT account_id FROM api_keys WHERE id = ?');
    this.updateModels = db.prepare('UPDATE api_keys SET allowed_models = ? WHERE id = ?');
    this.markRevoked = db.prepare("UPDATE api_keys SET status = 'revoked', revoked_at = ? WHERE id = ? AND status = 'active'");
    this.updateSecret = db.prepare<[string, string, string]>('UPDATE api_keys SET prefix = ?, secret_hash = ? WHERE id = ?');
    const event = prepareWebhookInsert(db);
    // The revoke and its key.revoked event: one transaction (docs/adr/0052-signed-webhooks.md).
    this.revokeTx = db.transaction((id: string, now: number) => {
      if (this.markRevoked.run(new Date(now).toISOString(), id).changes !== 1) return;
      const key = this.byId.get(id)!;
      event({ type: 'key.revoked', data: { key_id: id, account_id: key.account_id, key_name: key.name, revoked_at: new Date(now).toISOString() } }, now);
    });
  }

  async page(query: KeyPageQuery): Promise<KeyRecord[]> {
    const { sql, values } = keyPageSql(KEY_COLUMNS, query, () => '?');
    return this.db.prepare<unknown[], KeyRow>(sql).all(...values).map(keyRecordOf);
  }

  async update(id: string, change: KeyChange): Promise<KeyRecord | undefined> {
    const statement = keyUpdateSql(id, change, () => '?');
    if (statement) this.db.prepare(statement.sql).run(...statement.values);
    this.recent.forgetAll();
    return this.get(id);
  }

  async rotate(id: string, prefix: string, secretHash: string): Promise<KeyRecord | undefined> {
    this.updateSecret.run(prefix, secretHash, id);
    this.recent.forgetAll();
    return this.get(id);
  }

  async entries(query: EntryPageQuery): Promise<LedgerEntry[]> {
    const { sql, values } = entryPageSql(query, () => '?');
    return this.db.prepare<unknown[], EntryRow>(sql).all(...values).map(ledgerEntryOf);
  }

  async create(key: NewKey): Promise<KeyRecord> {
    this.db
      .transaction(() => {
        // Without an account, the key gets a personal one holding its opening balance.
        const accountId = key.accountId ?? personalAccountId(key.id);
        if (key.accountId === undefined) {
          this.accountWrites.create({ id: accountId, name: key.name, initialBalance: 0, topupRequestId: key.topupRequestId, now: key.now, personal: true });
        }
        this.insert.run({
          id: key.id,
          accountId,
          creditLimit: key.creditLimit ?? null,
          name: key.name,
          prefix: key.prefix,
          secretHash: key.secretHash,
          allowedModels: serialiseAllowList(key.allowedModels),
          createdAt: new Date(key.now).toISOString(),
          ...(key.limits ?? NO_KEY_LIMITS),
          expiresAt: key.expiresAt ?? null,
        });
        if (key.initialBalance > 0) this.accountWrites.topUp(accountId, key.id, key.initialBalance, key.topupRequestId, key.now);
      })
      .immediate();
    return keyRecordOf(this.byId.get(key.id)!);
  }

  async findByHash(secretHash: string, maxAgeMs = 0): Promise<KeyRecord | undefined> {
    const now = Date.now();
    const version = this.dataVersion.get()!.data_version;
    if (version !== this.seenVersion) {
      this.recent.forgetAll();
      this.seenVersion = version;
    }
    if (maxAgeMs > 0) {
      const recent = this.recent.get(secretHash, maxAgeMs, now);
      if (recent) return recent;
    }
    const row = this.byHash.get(secretHash);
    const key = row && keyRecordOf(row);
    // Read and remembered in one turn of the event loop: no change of this process can fall between.
    this.recent.remember(secretHash, key, now, this.recent.currentGeneration);
    return key;
  }

  /** After a change of an account's money or status (or a key's, below): later requests read the file again. */
  forgetRecent(): void {
    this.recent.forgetAll();
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
      .transaction(() => {
        const key = this.accountOf.get(id);
        if (key) this.accountWrites.topUp(key.account_id, id, amount, requestId, now);
        return key !== undefined;
      })
      .immediate();
    this.recent.forgetAll();
    return found ? this.get(id) : undefined;
  }

  async setAllowedModels(id: string, models: AllowedModels): Promise<KeyRecord | undefined> {
    this.updateModels.run(serialiseAllowList(models), id);
    this.recent.forgetAll();
    return this.get(id);
  }

  async setLimits(id: string, patch: LimitsPatch): Promise<KeyRecord | undefined> {
    const { sql, values } = limitsAssignments(patch, () => '?');
    if (sql) this.db.prepare(`UPDATE api_keys SET ${sql} WHERE id = ?`).run(...values, id);
    this.recent.forgetAll();
    return this.get(id);
  }

  async revoke(id: string, now: number): Promise<KeyRecord | undefined> {
    this.revokeTx.immediate(id, now);
    this.recent.forgetAll();
    return this.get(id);
  }
}
