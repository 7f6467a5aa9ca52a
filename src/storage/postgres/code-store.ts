// Redemption codes on PostgreSQL (docs/adr/0051-redemption-codes.md). A redeem is one transaction: the
// account row is locked first (FOR UPDATE: the lock order of every ledger writer, accounts before
// anything else), then the code is claimed by one conditional UPDATE — a rival claim of the same code
// waits for the row and, once this commits, finds its WHERE no longer true — and the account credited
// (a top-up entry whose request id derives from the code's id).
import { creditRefusal } from '../credit-check.js';
import { claimCodeSql, CODE_COLUMNS, codePageSql, codeRecordOf, INSERT_CODE_COLUMNS, redeemRequestId, refusedClaim, type CodeRow, type CodeStateRow } from '../code-sql.js';
import { ACCOUNT_COLUMNS, accountRecordOf, type AccountRow } from '../rows.js';
import type { CodePageQuery, CodeRecord, CodeStore, NewCode, RedeemResult, Redemption } from '../types.js';
import { creditAccount } from './account-store.js';
import { inTransaction, type PostgresPool } from './connection.js';

/** Thrown inside the transaction to roll the claim back when the credit cannot be written. */
class Refused extends Error {
  constructor(readonly outcome: 'over_maximum') {
    super(outcome);
  }
}

const CLAIM = claimCodeSql((i) => `$${i}`);

export class PostgresCodeStore implements CodeStore {
  /** `changed`: told after a credit (the key store forgets its recent rows, which carry the account's balance). */
  constructor(
    private readonly pool: PostgresPool,
    private readonly changed: () => void = () => {},
  ) {}

  async create(codes: readonly NewCode[]): Promise<void> {
    if (codes.length === 0) return;
    const columns = INSERT_CODE_COLUMNS.split(', ').length;
    const values: unknown[] = [];
    const rows = codes.map((c, i) => {
      values.push(c.id, c.hash, c.prefix, c.amount, c.accountId, c.expiresAt, c.batchId, c.note, new Date(c.now).toISOString());
      return `(${Array.from({ length: columns }, (_, j) => `$${i * columns + j + 1}`).join(', ')})`;
    });
    await this.pool.query(`INSERT INTO redemption_codes (${INSERT_CODE_COLUMNS}) VALUES ${rows.join(', ')}`, values);
  }

  async get(id: string): Promise<CodeRecord | undefined> {
    const { rows } = await this.pool.query<CodeRow>(`SELECT ${CODE_COLUMNS} FROM redemption_codes WHERE id = $1`, [id]);
    return rows[0] && codeRecordOf(rows[0]);
  }

  async page(query: CodePageQuery): Promise<CodeRecord[]> {
    const { sql, values } = codePageSql(query, (i) => `$${i}`);
    const { rows } = await this.pool.query<CodeRow>(sql, values);
    return rows.map(codeRecordOf);
  }

  async revoke(target: { readonly id: string } | { readonly batchId: string }, now: number): Promise<number> {
    const [column, value] = 'id' in target ? ['id', target.id] : ['batch_id', target.batchId];
    const result = await this.pool.query(`UPDATE redemption_codes SET revoked_at = $1 WHERE ${column} = $2 AND redeemed_at IS NULL AND revoked_at IS NULL`, [now, value]);
    return result.rowCount ?? 0;
  }

  async redeem(r: Redemption): Promise<RedeemResult> {
    let result: RedeemResult;
    try {
      result = await inTransaction(this.pool, async (client): Promise<RedeemResult> => {
        const before = (await client.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1 FOR UPDATE`, [r.accountId])).rows[0];
        if (!before) return { outcome: 'missing' };
        if (before.status !== 'active') return { outcome: 'suspended' };
        const row = (await client.query<CodeRow>(CLAIM, [r.now, r.accountId, r.keyId, r.hash, r.now, r.accountId])).rows[0];
        if (!row) {
          const state = (await client.query<CodeStateRow>('SELECT account_id, expires_at, redeemed_at, revoked_at FROM redemption_codes WHERE code_hash = $1', [r.hash])).rows[0];
          return { outcome: refusedClaim(state, r.accountId, r.now) };
        }
        const code = codeRecordOf(row);
        const requestId = redeemRequestId(code.id);
        const credit = { accountId: r.accountId, kind: 'topup' as const, amount: code.amount, requestId, note: `redemption code ${code.prefix}`, now: r.now };
        if (creditRefusal({ balance: Number(before.balance), held: Number(before.held) }, undefined, false, credit) !== undefined) throw new Refused('over_maximum');
        if (!(await creditAccount(client, r.accountId, null, 'topup', code.amount, requestId, r.now, credit.note))) {
          throw new Error(`the top-up of redemption code ${code.id} exists though the code was unredeemed`);
        }
        const after = (await client.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1`, [r.accountId])).rows[0]!;
        return { outcome: 'applied', code, account: accountRecordOf(after) };
      });
    } catch (error) {
      if (error instanceof Refused) return { outcome: error.outcome };
      throw error;
    }
    if (result.outcome === 'applied') this.changed();
    return result;
  }
}
