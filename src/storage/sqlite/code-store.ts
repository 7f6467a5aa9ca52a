// Redemption codes on SQLite (docs/adr/0051-redemption-codes.md). A redeem is one IMMEDIATE transaction:
// the account is read, the code claimed by one conditional UPDATE and the account credited (a top-up
// entry whose request id derives from the code's id) — another connection's redeem of the same code runs
// wholly before or after it, so it sees the code claimed.
import { creditRefusal } from '../credit-check.js';
import { claimCodeSql, CODE_COLUMNS, codePageSql, codeRecordOf, INSERT_CODE_COLUMNS, redeemRequestId, refusedClaim, type CodeRow, type CodeStateRow } from '../code-sql.js';
import { ACCOUNT_COLUMNS, accountRecordOf, type AccountRow } from '../rows.js';
import type { CodePageQuery, CodeRecord, CodeStore, NewCode, RedeemResult, Redemption } from '../types.js';
import { prepareAccountWrites } from './account-store.js';
import type { SqliteDatabase } from './connection.js';

/** Thrown inside the transaction to roll the claim back when the credit cannot be written. */
class Refused extends Error {
  constructor(readonly outcome: 'over_maximum') {
    super(outcome);
  }
}

export class SqliteCodeStore implements CodeStore {
  private readonly insertTx;
  private readonly byId;
  private readonly redeemTx;

  /** `changed`: told after a credit (the key store forgets its recent rows, which carry the account's balance). */
  constructor(
    private readonly db: SqliteDatabase,
    private readonly changed: () => void = () => {},
  ) {
    const insert = db.prepare(`INSERT INTO redemption_codes (${INSERT_CODE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.insertTx = db.transaction((codes: readonly NewCode[]) => {
      for (const c of codes) insert.run(c.id, c.hash, c.prefix, c.amount, c.accountId, c.expiresAt, c.batchId, c.note, new Date(c.now).toISOString());
    });
    this.byId = db.prepare<[string], CodeRow>(`SELECT ${CODE_COLUMNS} FROM redemption_codes WHERE id = ?`);
    const account = db.prepare<[string], AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ?`);
    const claim = db.prepare<unknown[], CodeRow>(claimCodeSql(() => '?'));
    const state = db.prepare<[string], CodeStateRow>('SELECT account_id, expires_at, redeemed_at, revoked_at FROM redemption_codes WHERE code_hash = ?');
    const writes = prepareAccountWrites(db);
    this.redeemTx = db.transaction((r: Redemption): RedeemResult => {
      const before = account.get(r.accountId);
      if (!before) return { outcome: 'missing' };
      if (before.status !== 'active') return { outcome: 'suspended' };
      const row = claim.get(r.now, r.accountId, r.keyId, r.hash, r.now, r.accountId);
      if (!row) return { outcome: refusedClaim(state.get(r.hash), r.accountId, r.now) };
      const code = codeRecordOf(row);
      const credit = { accountId: r.accountId, kind: 'topup' as const, amount: code.amount, requestId: redeemRequestId(code.id), note: `redemption code ${code.prefix}`, now: r.now };
      if (creditRefusal({ balance: before.balance, held: before.held }, undefined, false, credit) !== undefined) throw new Refused('over_maximum');
      // The code was unclaimed until now, so its entry cannot exist: a duplicate would be a broken invariant.
      if (!writes.credit(r.accountId, credit)) throw new Error(`the top-up of redemption code ${code.id} exists though the code was unredeemed`);
      return { outcome: 'applied', code, account: accountRecordOf(account.get(r.accountId)!) };
    });
  }

  async create(codes: readonly NewCode[]): Promise<void> {
    this.insertTx.immediate(codes);
  }

  async get(id: string): Promise<CodeRecord | undefined> {
    const row = this.byId.get(id);
    return row && codeRecordOf(row);
  }

  async page(query: CodePageQuery): Promise<CodeRecord[]> {
    const { sql, values } = codePageSql(query, () => '?');
    return this.db.prepare<unknown[], CodeRow>(sql).all(...values).map(codeRecordOf);
  }

  async revoke(target: { readonly id: string } | { readonly batchId: string }, now: number): Promise<number> {
    const [column, value] = 'id' in target ? ['id', target.id] : ['batch_id', target.batchId];
    return this.db.prepare(`UPDATE redemption_codes SET revoked_at = ? WHERE ${column} = ? AND redeemed_at IS NULL AND revoked_at IS NULL`).run(now, value).changes;
  }

  async redeem(redemption: Redemption): Promise<RedeemResult> {
    try {
      const result = this.redeemTx.immediate(redemption);
      if (result.outcome === 'applied') this.changed();
      return result;
    } catch (error) {
      if (error instanceof Refused) return { outcome: error.outcome };
      throw error;
    }
  }
}
