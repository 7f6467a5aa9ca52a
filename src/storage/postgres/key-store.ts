// API keys on PostgreSQL. Only the secret's hash is stored. A key draws on its account's money
// (docs/adr/0047-accounts.md): made without one, it gets a personal account holding its opening balance.
import type { Nano } from '../../billing/money.js';
import { entryPageSql, keyPageSql, keyUpdateSql, ledgerEntryOf, type EntryRow } from '../listing-sql.js';
import { KEY_COLUMNS, KEY_FROM, keyRecordOf, limitsAssignments, personalAccountId, serialiseAllowList, type KeyRow } from '../rows.js';
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
import { creditAccount, insertAccount } from './account-store.js';
import { inTransaction, type PostgresClient, type PostgresPool } from './connection.js';
import { KeyLookupBatcher } from './key-lookup-batcher.js';
import { RecentKeys } from '../recent-keys.js';
import { insertWebhookEvent } from './webhook-store.js';

async function applyTopUp(client: PostgresClient, accountId: string, keyId: string, amount: Nano, requestId: string, now: number): Promise<void> {
  if (!(await creditAccount(client, accountId, keyId, 'topup', amount, requestId, now, null))) {
    throw new Error(`a top-up with request id ${requestId} exists`);
  }
}

export class PostgresKeyStore implements KeyStore {
  private readonly lookups: KeyLookupBatcher;
  private readonly recent = new RecentKeys();

  constructor(private readonly pool: PostgresPool) {
    this.lookups = new KeyLookupBatcher(pool);
  }

  async create(key: NewKey): Promise<KeyRecord> {
    await inTransaction(this.pool, async (client) => {
      const limits = key.limits ?? NO_KEY_LIMITS;
      // Without an account, the key gets a personal one holding its opening balance.
      const accountId = key.accountId ?? personalAccountId(key.id);
      if (key.accountId === undefined) await insertAccount(client, { id: accountId, name: key.name, now: key.now, personal: true });
      // An opening top-up into a shared account locks its row first, as every ledger writer does.
      else if (key.initialBalance > 0) await client.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
      await client.query(
        `INSERT INTO api_keys (id, account_id, credit_limit, name, prefix, secret_hash, allowed_models, created_at, rpm, tpm, max_concurrent, budget, budget_period, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
        [
          key.id,
          accountId,
          key.creditLimit ?? null,
          key.name,
          key.prefix,
          key.secretHash,
          serialiseAllowList(key.allowedModels),
          new Date(key.now).toISOString(),
          limits.rpm,
          limits.tpm,
          limits.maxConcurrent,
          limits.budget,
          limits.budgetPeriod,
          key.expiresAt ?? null,
        ],
      );
      if (key.initialBalance > 0) await applyTopUp(client, accountId, key.id, key.initialBalance, key.topupRequestId, key.now);
    });
    return (await this.get(key.id))!;
  }

  async findByHash(secretHash: string, maxAgeMs = 0): Promise<KeyRecord | undefined> {
    const askedAt = Date.now();
    if (maxAgeMs > 0) {
      const recent = this.recent.get(secretHash, maxAgeMs, askedAt);
      if (recent) return recent;
    }
    // Otherwise batched with the other requests' lookups of the moment (a query sent after this call).
    const generation = this.recent.currentGeneration;
    const row = await this.lookups.lookup(secretHash);
    const key = row && keyRecordOf(row);
    this.recent.remember(secretHash, key, askedAt, generation);
    return key;
  }

  async get(id: string): Promise<KeyRecord | undefined> {
    const { rows } = await this.pool.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEY_FROM} WHERE k.id = $1`, [id]);
    return rows[0] && keyRecordOf(rows[0]);
  }

  async list(): Promise<KeyRecord[]> {
    const { rows } = await this.pool.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEY_FROM} ORDER BY k.created_at, k.id`);
    return rows.map(keyRecordOf);
  }

  async topUp(id: string, amount: Nano, requestId: string, now: number): Promise<KeyRecord | undefined> {
    const found = await inTransaction(this.pool, async (client) => {
      // The key's account (immutable: read without a lock), then its row locked: accounts before keys.
      const { rows } = await client.query<{ account_id: string }>('SELECT account_id FROM api_keys WHERE id = $1', [id]);
      const accountId = rows[0]?.account_id;
      if (accountId === undefined) return false;
      await client.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
      await applyTopUp(client, accountId, id, amount, requestId, now);
      return true;
    });
    this.recent.forgetAll();
    return found ? this.get(id) : undefined;
  }

  async setAllowedModels(id: string, models: AllowedModels): Promise<KeyRecord | undefined> {
    await this.pool.query('UPDATE api_keys SET allowed_models = $1 WHERE id = $2', [serialiseAllowList(models), id]);
    this.recent.forgetAll();
    return this.get(id);
  }

  async setLimits(id: string, patch: LimitsPatch): Promise<KeyRecord | undefined> {
    const { sql, values } = limitsAssignments(patch, (i) => `$${i}`);
    if (sql) await this.pool.query(`UPDATE api_keys SET ${sql} WHERE id = $${values.length + 1}`, [...values, id]);
    this.recent.forgetAll();
    return this.get(id);
  }

  async revoke(id: string, now: number): Promise<KeyRecord | undefined> {
    // The revoke and its key.revoked event: one transaction (docs/adr/0052-signed-webhooks.md).
    await inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ account_id: string; name: string }>(
        "UPDATE api_keys SET status = 'revoked', revoked_at = $1 WHERE id = $2 AND status = 'active' RETURNING account_id, name",
        [new Date(now).toISOString(), id],
      );
      const key = rows[0];
      if (key) {
        await insertWebhookEvent(client, { type: 'key.revoked', data: { key_id: id, account_id: key.account_id, key_name: key.name, revoked_at: new Date(now).toISOString() } }, now);
      }
    });
    this.recent.forgetAll();
    return this.get(id);
  }

  async page(query: KeyPageQuery): Promise<KeyRecord[]> {
    const { sql, values } = keyPageSql(KEY_COLUMNS, query, (i) => `$${i}`);
    const { rows } = await this.pool.query<KeyRow>(sql, values);
    return rows.map(keyRecordOf);
  }

  async update(id: string, change: KeyChange): Promise<KeyRecord | undefined> {
    const statement = keyUpdateSql(id, change, (i) => `$${i}`);
    if (statement) await this.pool.query(statement.sql, statement.values);
    this.recent.forgetAll();
    return this.get(id);
  }

  async rotate(id: string, prefix: string, secretHash: string): Promise<KeyRecord | undefined> {
    await this.pool.query('UPDATE api_keys SET prefix = $1, secret_hash = $2 WHERE id = $3', [prefix, secretHash, id]);
    this.recent.forgetAll();
    return this.get(id);
  }

  /** After a change elsewhere (an account's money or status): later requests read the database again. */
  forgetRecent(): void {
    this.recent.forgetAll();
  }

  async entries(query: EntryPageQuery): Promise<LedgerEntry[]> {
    const { sql, values } = entryPageSql(query, (i) => `$${i}`);
    const { rows } = await this.pool.query<EntryRow>(sql, values);
    return rows.map(ledgerEntryOf);
  }
}
