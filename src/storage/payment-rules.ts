// Stripe payments' rules shared by both dialects (docs/adr/0050-stripe-top-ups.md): the row's columns and
// record, and how much of a refund or a dispute is taken back. Each store reads the payment and its
// account under the account's lock (SQLite's IMMEDIATE transaction, PostgreSQL's FOR UPDATE) and asks
// `reversalPlan` before writing, so two deliveries of one event cannot both take the money.
import { nanoToUsd, type Nano } from '../billing/money.js';
import type { NewPayment, NewWebhookEvent, PaymentRecord, PaymentReversal } from './types.js';

export const PAYMENT_COLUMNS = 'session_id, payment_intent, account_id, key_id, amount, refunded, disputed, unrecovered, created_at';

export interface PaymentRow {
  session_id: string;
  payment_intent: string | null;
  account_id: string;
  key_id: string | null;
  amount: number;
  refunded: number;
  disputed: number;
  unrecovered: number;
  created_at: number;
}

export function paymentRecordOf(row: PaymentRow): PaymentRecord {
  return {
    sessionId: row.session_id,
    paymentIntent: row.payment_intent,
    accountId: row.account_id,
    keyId: row.key_id,
    amount: Number(row.amount),
    refunded: Number(row.refunded),
    disputed: Number(row.disputed),
    unrecovered: Number(row.unrecovered),
    createdAt: Number(row.created_at),
  };
}

export interface ReversalPlan {
  /** Nano-dollars newly taken back (0 for a dispute of an already fully reversed payment: still recorded once). */
  readonly taken: Nano;
  /** Of those, what the adjustment takes from the balance (at most the available balance). */
  readonly debited: Nano;
  /** The payment's totals after it. */
  readonly refunded: Nano;
  readonly disputed: Nano;
  readonly unrecovered: Nano;
}

/**
 * What a reversal does to `payment`, given the account's available balance (balance − held), or
 * undefined: it was recorded before (a refund whose cumulative amount is not above what was refunded; a
 * dispute whose record exists). Never more than the payment's amount is taken back in all; never more
 * than the available balance is debited (the store refuses to overdraw): the rest is `unrecovered`.
 */
export function reversalPlan(payment: PaymentRecord, available: Nano, reversal: PaymentReversal, recorded: boolean): ReversalPlan | undefined {
  if (recorded) return undefined;
  const room = Math.max(0, payment.amount - payment.refunded - payment.disputed);
  let taken: Nano;
  let refunded = payment.refunded;
  let disputed = payment.disputed;
  if (reversal.kind === 'refund') {
    const cumulative = Math.min(reversal.amount, payment.amount);
    if (cumulative <= payment.refunded) return undefined;
    taken = Math.min(cumulative - payment.refunded, room);
    refunded = cumulative;
  } else {
    taken = Math.min(Math.max(0, reversal.amount), room);
    disputed += taken;
  }
  const debited = Math.min(taken, Math.max(0, available));
  return { taken, debited, refunded, disputed, unrecovered: payment.unrecovered + taken - debited };
}

/** The adjustment entry's request id of a reversal. */
export const reversalRequestId = (reversal: PaymentReversal): string => `stripe:${reversal.id}`;

/**
 * The `payment.succeeded` event a recorded payment writes in its credit's transaction (ADR 0052): with the
 * money, never without it, once per session (its dedupe key).
 */
export function paymentSucceededEvent(payment: NewPayment): NewWebhookEvent {
  return {
    type: 'payment.succeeded',
    dedupeKey: `payment.succeeded:${payment.sessionId}`,
    data: {
      account_id: payment.accountId,
      key_id: payment.keyId,
      provider: 'stripe',
      session_id: payment.sessionId,
      payment_intent: payment.paymentIntent,
      amount_usd: nanoToUsd(payment.amount),
    },
  };
}

/**
 * The `payment.refunded` event of a refund or a dispute taken back (in the adjustment's transaction):
 * what was newly reversed, what the balance gave, and what it could not (unrecovered).
 */
export function paymentRefundedEvent(payment: PaymentRecord, reversal: PaymentReversal, plan: ReversalPlan): NewWebhookEvent {
  return {
    type: 'payment.refunded',
    dedupeKey: `payment.refunded:${reversal.id}`,
    data: {
      account_id: payment.accountId,
      provider: 'stripe',
      kind: reversal.kind,
      reversal_id: reversal.id,
      session_id: payment.sessionId,
      payment_intent: payment.paymentIntent,
      amount_usd: nanoToUsd(plan.taken),
      debited_usd: nanoToUsd(plan.debited),
      unrecovered_usd: nanoToUsd(plan.taken - plan.debited),
    },
  };
}
