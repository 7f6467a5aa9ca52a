// Stripe payments on PostgreSQL (docs/adr/0050-stripe-top-ups.md): a paid session's row and its credit,
// and a refund's or a dispute's record and its adjustment, each in one transaction under the account
// row's FOR UPDATE lock (the lock every credit takes first): concurrent deliveries of one event, from any
// gateway on this database, queue on it, and the second finds the first's rows.
import type { NewPayment, PaymentOutcome, PaymentPageQuery, PaymentRecord, PaymentReversal, PaymentStore, ReversalResult } from '../types.js';
import { CREDIT_ENTRY_EXISTS, creditRefusal, type CreditAccountRow } from '../credit-check.js';
import { PAYMENT_COLUMNS, paymentRecordOf, paymentRefundedEvent, paymentSucceededEvent, reversalPlan, reversalRequestId, type PaymentRow } from '../payment-rules.js';
import { creditAccount } from './account-store.js';
import { inTransaction, type PostgresClient, type PostgresPool } from './connection.js';
import { insertWebhookEvent } from './webhook-store.js';

const lockAccount = async (client: PostgresClient, id: string): Promise<CreditAccountRow | undefined> =>
  (await client.query<CreditAccountRow>('SELECT balance, held FROM accounts WHERE id = $1 FOR UPDATE', [id])).rows[0];

export class PostgresPaymentStore implements PaymentStore {
  /** `changed`: told after an account's money changed (the key store forgets its recent rows). */
  constructor(
    private readonly pool: PostgresPool,
    private readonly changed: () => void = () => {},
  ) {}

  async recordPaid(payment: NewPayment): Promise<PaymentOutcome> {
    const outcome = await inTransaction(this.pool, async (client): Promise<PaymentOutcome> => {
      const account = await lockAccount(client, payment.accountId);
      const credit = { accountId: payment.accountId, kind: 'topup' as const, amount: payment.amount, requestId: payment.requestId, note: payment.note, now: payment.now };
      let exists = false;
      if (account) {
        const entry = await client.query(CREDIT_ENTRY_EXISTS('$1', '$2'), [payment.requestId, 'topup']);
        const row = await client.query('SELECT 1 FROM stripe_payments WHERE session_id = $1', [payment.sessionId]);
        exists = (entry.rowCount ?? 0) > 0 || (row.rowCount ?? 0) > 0;
      }
      const refusal = creditRefusal(account, undefined, exists, credit);
      if (refusal === 'revoked' || refusal === 'overdraw') throw new Error(`a payment's credit cannot be ${refusal}`);
      if (refusal) return refusal;
      await client.query(
        `INSERT INTO stripe_payments (session_id, payment_intent, account_id, key_id, amount, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
        [payment.sessionId, payment.paymentIntent, payment.accountId, payment.keyId, payment.amount, payment.now],
      );
      if (!(await creditAccount(client, payment.accountId, null, 'topup', payment.amount, payment.requestId, payment.now, payment.note))) {
        throw new Error(`the credit ${payment.requestId} exists`);
      }
      await insertWebhookEvent(client, paymentSucceededEvent(payment), payment.now);
      return 'applied';
    });
    if (outcome === 'applied') this.changed();
    return outcome;
  }

  async reverse(reversal: PaymentReversal): Promise<ReversalResult> {
    const result = await inTransaction(this.pool, async (client): Promise<ReversalResult> => {
      // The payment's account never changes: read it without a lock, lock the account, then read the
      // payment's totals again (every write of them holds that account's lock).
      const found = await client.query<{ account_id: string }>('SELECT account_id FROM stripe_payments WHERE payment_intent = $1', [reversal.paymentIntent]);
      if (found.rows.length === 0) return { outcome: 'unknown_payment' };
      const account = (await lockAccount(client, found.rows[0]!.account_id))!;
      const row = (await client.query<PaymentRow>(`SELECT ${PAYMENT_COLUMNS} FROM stripe_payments WHERE payment_intent = $1`, [reversal.paymentIntent])).rows[0]!;
      const payment = paymentRecordOf(row);
      const recorded = ((await client.query('SELECT 1 FROM stripe_reversals WHERE id = $1', [reversal.id])).rowCount ?? 0) > 0;
      const plan = reversalPlan(payment, account.balance - account.held, reversal, recorded);
      if (!plan) return { outcome: 'duplicate', payment };
      await client.query('INSERT INTO stripe_reversals (id, session_id, kind, amount, debited, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [
        reversal.id,
        payment.sessionId,
        reversal.kind,
        plan.taken,
        plan.debited,
        reversal.now,
      ]);
      await client.query('UPDATE stripe_payments SET refunded = $1, disputed = $2, unrecovered = $3 WHERE session_id = $4', [plan.refunded, plan.disputed, plan.unrecovered, payment.sessionId]);
      if (plan.debited > 0 && !(await creditAccount(client, payment.accountId, null, 'adjust', -plan.debited, reversalRequestId(reversal), reversal.now, reversal.note))) {
        throw new Error(`the adjustment ${reversalRequestId(reversal)} exists`);
      }
      await insertWebhookEvent(client, paymentRefundedEvent(payment, reversal, plan), reversal.now);
      const after = { ...payment, refunded: plan.refunded, disputed: plan.disputed, unrecovered: plan.unrecovered };
      return { outcome: 'applied', payment: after, taken: plan.taken, debited: plan.debited };
    });
    if (result.outcome === 'applied') this.changed();
    return result;
  }

  async get(sessionId: string): Promise<PaymentRecord | undefined> {
    const { rows } = await this.pool.query<PaymentRow>(`SELECT ${PAYMENT_COLUMNS} FROM stripe_payments WHERE session_id = $1`, [sessionId]);
    return rows[0] && paymentRecordOf(rows[0]);
  }

  async byPaymentIntent(paymentIntent: string): Promise<PaymentRecord | undefined> {
    const { rows } = await this.pool.query<PaymentRow>(`SELECT ${PAYMENT_COLUMNS} FROM stripe_payments WHERE payment_intent = $1`, [paymentIntent]);
    return rows[0] && paymentRecordOf(rows[0]);
  }

  async page(query: PaymentPageQuery): Promise<PaymentRecord[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    const next = (value: unknown): string => `$${values.push(value)}`;
    if (query.accountId !== undefined) where.push(`account_id = ${next(query.accountId)}`);
    if (query.before) {
      const at = next(query.before.createdAt);
      where.push(`(created_at < ${at} OR (created_at = ${at} AND session_id < ${next(query.before.sessionId)}))`);
    }
    const sql = `SELECT ${PAYMENT_COLUMNS} FROM stripe_payments ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, session_id DESC LIMIT ${next(query.limit)}`;
    const { rows } = await this.pool.query<PaymentRow>(sql, values);
    return rows.map(paymentRecordOf);
  }
}
