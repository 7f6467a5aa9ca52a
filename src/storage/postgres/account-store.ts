// Accounts on PostgreSQL (docs/adr/0047-accounts.md): the money its keys spend. A credit (a top-up or an
// adjustment, of an account or of a key's account) is decided under the account row's FOR UPDATE lock,
// taken before the key's (FOR SHARE, so a revoke waits for it or it reads the revoke): the lock order of
// every ledger writer (accounts, then keys), so it never deadlocks with a batch or the sweeper.
import type { Nano } from '../../billing/money.js';
import { accountPageSql, accountUpdateSql } from '../listing-sql.js';
import { ACCOUNT_COLUMNS, accountRecordOf, KEY_COLUMNS, KEY_FROM, keyRecordOf, serialiseAllowList, type AccountRow, type KeyRow } from '../rows.js';
import type { AccountChange, AccountPageQuery, AccountRecord, AccountStore, Credit, CreditOutcome, KeyRecord, NewAccount } from '../types.js';
import { CREDIT_ENTRY_EXISTS, creditRefusal, type CreditAccountRow } from '../credit-check.js';
import { inTransaction, type PostgresClient, type PostgresPool } from './connection.js';
import { insertWebhookEvent } from './webhook-store.js';

/** Inserts an account (no money yet); the key store makes personal accounts with it too. */
export async function insertAccount(client: PostgresClient, account: Omit<NewAccount, 'initialBalance' | 'topupRequestId'> & { readonly personal: boolean }): Promise<void> {
  await client.query(
    `INSERT INTO accounts (id, name, status, budget, budget_period, metadata, allowed_models, personal, created_at)
     VALUES ($1, $2, 'active', $3, $4, $5, $6, $7, $8)`,
    [
      account.id,
      account.name,
      account.limits?.budget ?? null,
      account.limits?.budgetPeriod ?? null,
      JSON.stringify(account.metadata ?? {}),
      serialiseAllowList(account.allowedModels ?? '*'),
      account.personal ? 1 : 0,
      new Date(account.now).toISOString(),
    ],
  );
}

/**
 * A credit's entry and its money on the account (the caller holds the account's lock, or made it in this
 * transaction); false when an entry with its request id exists (a duplicate: nothing changed).
 */
export async function creditAccount(
  client: PostgresClient,
  accountId: string,
  keyId: string | null,
  kind: 'topup' | 'adjust',
  amount: Nano,
  requestId: string,
  now: number,
  note: string | null,
): Promise<boolean> {
  const inserted = await client.query(
    `INSERT INTO ledger_entries (account_id, key_id, request_id, kind, amount, created_at, note) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (request_id, kind, seq) DO NOTHING`,
    [accountId, keyId, requestId, kind, amount, now, note],
  );
  if (inserted.rowCount !== 1) return false;
  await client.query('UPDATE accounts SET balance = balance + $1 WHERE id = $2', [amount, accountId]);
  return true;
}

export class PostgresAccountStore implements AccountStore {
  /** `changed`: told after any change of an account's money or status (the key store forgets its recent rows). */
  constructor(
    private readonly pool: PostgresPool,
    private readonly changed: () => void = () => {},
  ) {}

  async create(account: NewAccount): Promise<AccountRecord> {
    await inTransaction(this.pool, async (client) => {
      await insertAccount(client, { ...account, personal: false });
      if (account.initialBalance > 0 && !(await creditAccount(client, account.id, null, 'topup', account.initialBalance, account.topupRequestId, account.now, null))) {
        throw new Error(`a top-up with request id ${account.topupRequestId} exists`);
      }
    });
    return (await this.get(account.id))!;
  }

  async get(id: string): Promise<AccountRecord | undefined> {
    const { rows } = await this.pool.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1`, [id]);
    return rows[0] && accountRecordOf(rows[0]);
  }

  async page(query: AccountPageQuery): Promise<AccountRecord[]> {
    const { sql, values } = accountPageSql(ACCOUNT_COLUMNS, query, (i) => `$${i}`);
    const { rows } = await this.pool.query<AccountRow>(sql, values);
    return rows.map(accountRecordOf);
  }

  async update(id: string, change: AccountChange): Promise<AccountRecord | undefined> {
    const statement = accountUpdateSql(id, change, (i) => `$${i}`);
    if (statement) await this.pool.query(statement.sql, statement.values);
    this.changed();
    return this.get(id);
  }

  async credit(credit: Credit): Promise<CreditOutcome> {
    const outcome = await inTransaction(this.pool, async (client): Promise<CreditOutcome> => {
      // A key's account never changes, so it is read without a lock; then the account row is locked,
      // then the key's (FOR SHARE: its status cannot change until this commits).
      let accountId = credit.accountId;
      if (credit.keyId !== undefined) {
        const { rows } = await client.query<{ account_id: string }>('SELECT account_id FROM api_keys WHERE id = $1', [credit.keyId]);
        accountId = rows[0]?.account_id;
      }
      const account =
        accountId === undefined
          ? undefined
          : (await client.query<CreditAccountRow>('SELECT balance, held FROM accounts WHERE id = $1 FOR UPDATE', [accountId])).rows[0];
      let keyStatus: string | undefined;
      if (account && credit.keyId !== undefined) {
        keyStatus = (await client.query<{ status: string }>('SELECT status FROM api_keys WHERE id = $1 FOR SHARE', [credit.keyId])).rows[0]?.status;
      }
      const entry = account ? await client.query(CREDIT_ENTRY_EXISTS('$1', '$2'), [credit.requestId, credit.kind]) : undefined;
      const refusal = creditRefusal(account, keyStatus, (entry?.rowCount ?? 0) > 0, credit);
      if (refusal) return refusal;
      const applied = await creditAccount(client, accountId!, credit.keyId ?? null, credit.kind, credit.amount, credit.requestId, credit.now, credit.note);
      if (!applied) return 'duplicate';
      // A payment's event goes with its money (docs/adr/0052-signed-webhooks.md).
      if (credit.event) await insertWebhookEvent(client, { ...credit.event, data: { ...credit.event.data, account_id: accountId } }, credit.now);
      return 'applied';
    });
    this.changed();
    return outcome;
  }

  async setToken(id: string, token: { readonly prefix: string; readonly hash: string } | null): Promise<AccountRecord | undefined> {
    await this.pool.query('UPDATE accounts SET token_prefix = $1, token_hash = $2 WHERE id = $3', [token?.prefix ?? null, token?.hash ?? null, id]);
    return this.get(id);
  }

  async findByTokenHash(hash: string): Promise<AccountRecord | undefined> {
    const { rows } = await this.pool.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE token_hash = $1`, [hash]);
    return rows[0] && accountRecordOf(rows[0]);
  }

  async keys(accountId: string): Promise<KeyRecord[]> {
    const { rows } = await this.pool.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEY_FROM} WHERE k.account_id = $1 ORDER BY k.created_at, k.id`, [accountId]);
    return rows.map(keyRecordOf);
  }
}
