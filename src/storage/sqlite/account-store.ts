// Accounts on SQLite (docs/adr/0047-accounts.md): the money its keys spend. Credits (top-ups and
// adjustments, of an account or of a key's account) are decided here, under the IMMEDIATE transaction's
// write lock, so a revoke or another credit from another connection is either before or after them.
import { accountPageSql, accountUpdateSql } from '../listing-sql.js';
import { ACCOUNT_COLUMNS, accountRecordOf, serialiseAllowList, KEY_COLUMNS, KEY_FROM, keyRecordOf, type AccountRow, type KeyRow } from '../rows.js';
import type { AccountChange, AccountPageQuery, AccountRecord, AccountStore, Credit, CreditOutcome, KeyRecord, NewAccount } from '../types.js';
import { CREDIT_ENTRY_EXISTS, creditRefusal, type CreditAccountRow } from '../credit-check.js';
import type { SqliteDatabase } from './connection.js';
import { prepareWebhookInsert } from './webhook-store.js';

/** The statements a new account and a credit share with the key store (a personal account is made with its key). */
export function prepareAccountWrites(db: SqliteDatabase) {
  const insert = db.prepare(
    `INSERT INTO accounts (id, name, status, budget, budget_period, metadata, allowed_models, personal, created_at)
     VALUES (@id, @name, 'active', @budget, @budgetPeriod, @metadata, @allowedModels, @personal, @createdAt)`,
  );
  const addBalance = db.prepare<[number, string]>('UPDATE accounts SET balance = balance + ? WHERE id = ?');
  const insertEntry = db.prepare<[string, string | null, string, string, number, number, string | null]>(
    'INSERT INTO ledger_entries (account_id, key_id, request_id, kind, amount, created_at, note) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (request_id, kind, seq) DO NOTHING',
  );
  return {
    /** Inserts the account, with its opening top-up when it has one. */
    create(account: NewAccount & { readonly personal: boolean }): void {
      insert.run({
        id: account.id,
        name: account.name,
        budget: account.limits?.budget ?? null,
        budgetPeriod: account.limits?.budgetPeriod ?? null,
        metadata: JSON.stringify(account.metadata ?? {}),
        allowedModels: serialiseAllowList(account.allowedModels ?? '*'),
        personal: account.personal ? 1 : 0,
        createdAt: new Date(account.now).toISOString(),
      });
      if (account.initialBalance > 0) this.topUp(account.id, null, account.initialBalance, account.topupRequestId, account.now);
    },
    topUp(accountId: string, keyId: string | null, amount: number, requestId: string, now: number): void {
      if (insertEntry.run(accountId, keyId, requestId, 'topup', amount, now, null).changes === 0) {
        throw new Error(`a top-up with request id ${requestId} exists`);
      }
      addBalance.run(amount, accountId);
    },
    /** A credit's entry and its money; false when its entry exists (a duplicate). */
    credit(accountId: string, credit: Credit): boolean {
      if (insertEntry.run(accountId, credit.keyId ?? null, credit.requestId, credit.kind, credit.amount, credit.now, credit.note).changes === 0) return false;
      addBalance.run(credit.amount, accountId);
      return true;
    },
  };
}

export class SqliteAccountStore implements AccountStore {
  private readonly writes;
  private readonly byId;
  private readonly byTokenHash;
  private readonly keysOf;
  private readonly creditTx;

  /** `changed`: told after a change of an account's money or status (the key store forgets its recent rows). */
  constructor(
    private readonly db: SqliteDatabase,
    private readonly changed: () => void = () => {},
  ) {
    this.writes = prepareAccountWrites(db);
    this.byId = db.prepare<[string], AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ?`);
    this.byTokenHash = db.prepare<[string], AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE token_hash = ?`);
    this.keysOf = db.prepare<[string], KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEY_FROM} WHERE k.account_id = ? ORDER BY k.created_at, k.id`);
    const keyOf = db.prepare<[string], { account_id: string; status: string }>('SELECT account_id, status FROM api_keys WHERE id = ?');
    const money = db.prepare<[string], CreditAccountRow>('SELECT balance, held FROM accounts WHERE id = ?');
    const entryExists = db.prepare<[string, string], { found: number }>(CREDIT_ENTRY_EXISTS('?', '?'));
    const event = prepareWebhookInsert(db);
    this.creditTx = db.transaction((credit: Credit): CreditOutcome => {
      const key = credit.keyId === undefined ? undefined : keyOf.get(credit.keyId);
      const accountId = key?.account_id ?? credit.accountId;
      const account = accountId === undefined ? undefined : money.get(accountId);
      const refusal = creditRefusal(account, key?.status, entryExists.get(credit.requestId, credit.kind) !== undefined, credit);
      if (refusal) return refusal;
      if (!this.writes.credit(accountId!, credit)) return 'duplicate';
      // A payment's event goes with its money (docs/adr/0052-signed-webhooks.md).
      if (credit.event) event({ ...credit.event, data: { ...credit.event.data, account_id: accountId } }, credit.now);
      return 'applied';
    });
  }

  async create(account: NewAccount): Promise<AccountRecord> {
    this.db.transaction(() => this.writes.create({ ...account, personal: false })).immediate();
    return accountRecordOf(this.byId.get(account.id)!);
  }

  async get(id: string): Promise<AccountRecord | undefined> {
    const row = this.byId.get(id);
    return row && accountRecordOf(row);
  }

  async page(query: AccountPageQuery): Promise<AccountRecord[]> {
    const { sql, values } = accountPageSql(ACCOUNT_COLUMNS, query, () => '?');
    return this.db.prepare<unknown[], AccountRow>(sql).all(...values).map(accountRecordOf);
  }

  async update(id: string, change: AccountChange): Promise<AccountRecord | undefined> {
    const statement = accountUpdateSql(id, change, () => '?');
    if (statement) this.db.prepare(statement.sql).run(...statement.values);
    this.changed();
    return this.get(id);
  }

  async credit(credit: Credit): Promise<CreditOutcome> {
    const outcome = this.creditTx.immediate(credit);
    if (outcome === 'applied') this.changed();
    return outcome;
  }

  async setToken(id: string, token: { readonly prefix: string; readonly hash: string } | null): Promise<AccountRecord | undefined> {
    this.db.prepare('UPDATE accounts SET token_prefix = ?, token_hash = ? WHERE id = ?').run(token?.prefix ?? null, token?.hash ?? null, id);
    return this.get(id);
  }

  async findByTokenHash(hash: string): Promise<AccountRecord | undefined> {
    const row = this.byTokenHash.get(hash);
    return row && accountRecordOf(row);
  }

  async keys(accountId: string): Promise<KeyRecord[]> {
    return this.keysOf.all(accountId).map(keyRecordOf);
  }
}
