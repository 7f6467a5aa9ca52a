// API keys on PostgreSQL. Only the secret's hash is stored.
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
import { CREDIT_ENTRY_EXISTS, creditRefusal, type CreditAccountRow } from '../credit-check.js';
import { inTransaction, type PostgresClient, type PostgresPool } from './connection.js';
import { KeyLookupBatcher } from './key-lookup-batcher.js';
import { RecentKeys } from './recent-keys.js';

async function applyTopUp(client: PostgresClient, id: string, amount: Nano, requestId: string, now: number): Promise<void> {
  await client.query('UPDATE api_keys SET balance = balance + $1 WHERE id = $2', [amount, id]);
  await client.query("INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at) VALUES ($1, $2, 'topup', $3, $4)", [
    id,
    requestId,
    amount,
    now,
  ]);
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
      await client.query(
        `INSERT INTO api_keys (id, name, prefix, secret_hash, allowed_models, created_at, rpm, tpm, max_concurrent, budget, budget_period, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        [
          key.id,
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
      if (key.initialBalance > 0) await applyTopUp(client, key.id, key.initialBalance, key.topupRequestId, key.now);
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
    const { rows } = await this.pool.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [id]);
    return rows[0] && keyRecordOf(rows[0]);
  }

  async list(): Promise<KeyRecord[]> {
    const { rows } = await this.pool.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY created_at, id`);
    return rows.map(keyRecordOf);
  }

  async topUp(id: string, amount: Nano, requestId: string, now: number): Promise<KeyRecord | undefined> {
    const found = await inTransaction(this.pool, async (client) => {
      const { rowCount } = await client.query('SELECT 1 FROM api_keys WHERE id = $1 FOR UPDATE', [id]);
      if (rowCount !== 1) return false;
      await applyTopUp(client, id, amount, requestId, now);
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
    await this.pool.query("UPDATE api_keys SET status = 'revoked', revoked_at = $1 WHERE id = $2 AND status = 'active'", [
      new Date(now).toISOString(),
      id,
    ]);
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

  async credit(credit: Credit): Promise<CreditOutcome> {
    // The key row is locked first, as every ledger write does, so the row read (balance, status) is the
    // one updated: a revoke waits for this commit, or this waits for the revoke's and reads it.
    const outcome = await inTransaction(this.pool, async (client): Promise<CreditOutcome> => {
      const { rows } = await client.query<CreditAccountRow>('SELECT balance, held, status FROM api_keys WHERE id = $1 FOR UPDATE', [credit.keyId]);
      const entry = rows[0] ? await client.query(CREDIT_ENTRY_EXISTS('$1', '$2'), [credit.requestId, credit.kind]) : undefined;
      const refusal = creditRefusal(rows[0], undefined, (entry?.rowCount ?? 0) > 0, credit);
      if (refusal) return refusal;
      const inserted = await client.query(
        `INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at, note) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (request_id, kind, seq) DO NOTHING`,
        [credit.keyId, credit.requestId, credit.kind, credit.amount, credit.now, credit.note],
      );
      if (inserted.rowCount !== 1) return 'duplicate';
      await client.query('UPDATE api_keys SET balance = balance + $1 WHERE id = $2', [credit.amount, credit.keyId]);
      return 'applied';
    });
    this.recent.forgetAll();
    return outcome;
  }

  async entries(query: EntryPageQuery): Promise<LedgerEntry[]> {
    const { sql, values } = entryPageSql(query, (i) => `$${i}`);
    const { rows } = await this.pool.query<EntryRow>(sql, values);
    return rows.map(ledgerEntryOf);
  }
}
