// Stripe payments on SQLite (docs/adr/0050-stripe-top-ups.md): a paid session's row and its credit, and a
// refund's or a dispute's record and its adjustment, each in one IMMEDIATE transaction — so concurrent
// deliveries of one event (from any process on this file) are one before the other, and the second
// finds the first's row.
import type { NewPayment, PaymentOutcome, PaymentPageQuery, PaymentRecord, PaymentReversal, PaymentStore, ReversalResult } from '../types.js';
import { CREDIT_ENTRY_EXISTS, creditRefusal, type CreditAccountRow } from '../credit-check.js';
import { PAYMENT_COLUMNS, paymentRecordOf, paymentRefundedEvent, paymentSucceededEvent, reversalPlan, reversalRequestId, type PaymentRow } from '../payment-rules.js';
import type { SqliteDatabase } from './connection.js';
import { prepareAccountWrites } from './account-store.js';
import { prepareWebhookInsert } from './webhook-store.js';

export class SqlitePaymentStore implements PaymentStore {
  private readonly recordTx;
  private readonly reverseTx;
  private readonly bySession;
  private readonly byIntent;

  /** `changed`: told after an account's money changed (the key store forgets its recent rows). */
  constructor(
    private readonly db: SqliteDatabase,
    private readonly changed: () => void = () => {},
  ) {
    const writes = prepareAccountWrites(db);
    const event = prepareWebhookInsert(db);
    const money = db.prepare<[string], CreditAccountRow>('SELECT balance, held FROM accounts WHERE id = ?');
    const entryExists = db.prepare<[string, string], { found: number }>(CREDIT_ENTRY_EXISTS('?', '?'));
    this.bySession = db.prepare<[string], PaymentRow>(`SELECT ${PAYMENT_COLUMNS} FROM stripe_payments WHERE session_id = ?`);
    const byIntent = (this.byIntent = db.prepare<[string], PaymentRow>(`SELECT ${PAYMENT_COLUMNS} FROM stripe_payments WHERE payment_intent = ?`));
    const insertPayment = db.prepare(
      `INSERT INTO stripe_payments (session_id, payment_intent, account_id, key_id, amount, created_at)
       VALUES (@sessionId, @paymentIntent, @accountId, @keyId, @amount, @now) ON CONFLICT DO NOTHING`,
    );
    const reversalExists = db.prepare<[string], { found: number }>('SELECT 1 AS found FROM stripe_reversals WHERE id = ?');
    const insertReversal = db.prepare<[string, string, string, number, number, number]>(
      'INSERT INTO stripe_reversals (id, session_id, kind, amount, debited, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    const updateTotals = db.prepare<[number, number, number, string]>('UPDATE stripe_payments SET refunded = ?, disputed = ?, unrecovered = ? WHERE session_id = ?');

    this.recordTx = db.transaction((payment: NewPayment): PaymentOutcome => {
      const credit = { accountId: payment.accountId, kind: 'topup' as const, amount: payment.amount, requestId: payment.requestId, note: payment.note, now: payment.now };
      const exists = entryExists.get(payment.requestId, 'topup') !== undefined || this.bySession.get(payment.sessionId) !== undefined;
      const refusal = creditRefusal(money.get(payment.accountId), undefined, exists, credit);
      if (refusal === 'revoked' || refusal === 'overdraw') throw new Error(`a payment's credit cannot be ${refusal}`);
      if (refusal) return refusal;
      insertPayment.run(payment);
      if (!writes.credit(payment.accountId, credit)) throw new Error(`the credit ${payment.requestId} exists`);
      event(paymentSucceededEvent(payment), payment.now);
      return 'applied';
    });

    this.reverseTx = db.transaction((reversal: PaymentReversal): ReversalResult => {
      const row = byIntent.get(reversal.paymentIntent);
      if (!row) return { outcome: 'unknown_payment' };
      const payment = paymentRecordOf(row);
      const account = money.get(payment.accountId)!;
      const plan = reversalPlan(payment, account.balance - account.held, reversal, reversalExists.get(reversal.id) !== undefined);
      if (!plan) return { outcome: 'duplicate', payment };
      insertReversal.run(reversal.id, payment.sessionId, reversal.kind, plan.taken, plan.debited, reversal.now);
      updateTotals.run(plan.refunded, plan.disputed, plan.unrecovered, payment.sessionId);
      if (plan.debited > 0) {
        const credit = { accountId: payment.accountId, kind: 'adjust' as const, amount: -plan.debited, requestId: reversalRequestId(reversal), note: reversal.note, now: reversal.now };
        if (!writes.credit(payment.accountId, credit)) throw new Error(`the adjustment ${credit.requestId} exists`);
      }
      event(paymentRefundedEvent(payment, reversal, plan), reversal.now);
      return { outcome: 'applied', payment: paymentRecordOf(this.bySession.get(payment.sessionId)!), taken: plan.taken, debited: plan.debited };
    });
  }

  async recordPaid(payment: NewPayment): Promise<PaymentOutcome> {
    const outcome = this.recordTx.immediate(payment);
    if (outcome === 'applied') this.changed();
    return outcome;
  }

  async reverse(reversal: PaymentReversal): Promise<ReversalResult> {
    const result = this.reverseTx.immediate(reversal);
    if (result.outcome === 'applied') this.changed();
    return result;
  }

  async get(sessionId: string): Promise<PaymentRecord | undefined> {
    const row = this.bySession.get(sessionId);
    return row && paymentRecordOf(row);
  }

  async byPaymentIntent(paymentIntent: string): Promise<PaymentRecord | undefined> {
    const row = this.byIntent.get(paymentIntent);
    return row && paymentRecordOf(row);
  }

  async page(query: PaymentPageQuery): Promise<PaymentRecord[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    if (query.accountId !== undefined) {
      where.push('account_id = ?');
      values.push(query.accountId);
    }
    if (query.before) {
      where.push('(created_at < ? OR (created_at = ? AND session_id < ?))');
      values.push(query.before.createdAt, query.before.createdAt, query.before.sessionId);
    }
    const sql = `SELECT ${PAYMENT_COLUMNS} FROM stripe_payments ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, session_id DESC LIMIT ?`;
    return this.db.prepare<unknown[], PaymentRow>(sql).all(...values, query.limit).map(paymentRecordOf);
  }
}
