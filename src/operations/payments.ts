// Customers adding credit through a payment provider (docs/adr/0050-stripe-top-ups.md), once below every
// face: starting a checkout (/v1/account/checkout), the two money decisions a provider's webhook leads to
// — credit a paid checkout, take back a refund or a dispute — each ONE function (the place a
// `payment.succeeded` / `payment.refunded` notification attaches), and the payments listing (admin API, CLI).
// A webhook's answer tells the provider whether to deliver again: 2xx for anything a retry cannot change
// (done, a duplicate, not ours, unpaid), 5xx when the database failed (the retry will succeed).
import { randomUUID } from 'node:crypto';
import { formatUsd, nanoToUsd, type Nano } from '../billing/money.js';
import type { Config } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { PaymentFact, PaymentProvider, WebhookEvent } from '../payments/types.js';
import type { AccountRecord, KeyRecord, PaymentRecord, Store } from '../storage/types.js';
import { usdAmount } from './amount-input.js';
import type { ListPage } from './json-types.js';
import { decodeCursor, listPage, pageSize } from './page.js';

/** One cent in nano-dollars: Stripe's amounts are integer cents. */
export const NANO_PER_CENT = 10_000_000;
const centsToNano = (cents: number): Nano => cents * NANO_PER_CENT;
/** The ledger request id of a checkout's credit: a second delivery of its session is a duplicate. */
export const checkoutRequestId = (sessionId: string): string => `stripe:${sessionId}`;

export interface CheckoutJson {
  object: 'checkout_session';
  id: string;
  url: string;
  /** USD. */
  amount: number;
  currency: 'usd';
  account_id: string;
}

/** What `GET /v1/account` and `GET /v1/key` say about adding credit (the dashboard shows "Add credit" by it). */
export interface PaymentsInfoJson {
  enabled: boolean;
  /** USD bounds of one checkout; null when payments are off. */
  min_amount: number | null;
  max_amount: number | null;
}

export function paymentsInfo(config: Config): PaymentsInfoJson {
  const stripe = config.payments.stripe;
  return stripe ? { enabled: true, min_amount: nanoToUsd(stripe.minAmount), max_amount: nanoToUsd(stripe.maxAmount) } : { enabled: false, min_amount: null, max_amount: null };
}

function disabled(): never {
  throw new GatewayError('payments_disabled');
}

/**
 * POST /v1/account/checkout: a Checkout Session for `amount` USD (whole cents, within min_amount and
 * max_amount) crediting `account`; `key`: the key that asked, when a key-holder did. A suspended account
 * may buy credit (the suspension stays; ADR 0050). `operationId`: the Idempotency-Key's stable id, so a
 * retried request makes one session at Stripe too.
 */
export async function startCheckout(
  provider: PaymentProvider | undefined,
  config: Config,
  account: AccountRecord,
  key: KeyRecord | null,
  input: { readonly amount?: unknown },
  operationId: string | undefined,
): Promise<CheckoutJson> {
  const stripe = config.payments.stripe;
  if (!provider || !stripe) disabled();
  const amount = usdAmount('amount', input.amount, { allowZero: false });
  const range = `from ${formatUsd(stripe.minAmount)} to ${formatUsd(stripe.maxAmount)} USD`;
  if (amount % NANO_PER_CENT !== 0) {
    throw new GatewayError('invalid_request', { param: 'amount', message: `Invalid 'amount': expected whole cents (at most 2 decimals), ${range}.` });
  }
  if (amount < stripe.minAmount || amount > stripe.maxAmount) {
    throw new GatewayError('invalid_request', { param: 'amount', message: `Invalid 'amount': ${formatUsd(amount)} USD is outside what one checkout may add, ${range}.` });
  }
  const started = await provider.startCheckout({
    accountId: account.id,
    keyId: key?.id ?? null,
    amountCents: amount / NANO_PER_CENT,
    idempotencyKey: `tollgate-checkout-${operationId ?? randomUUID()}`,
  });
  return { object: 'checkout_session', id: started.id, url: started.url, amount: nanoToUsd(centsToNano(started.amountCents)), currency: 'usd', account_id: account.id };
}

/** What a webhook delivery did; `status` is the HTTP answer (2xx: Stripe does not deliver it again). */
export interface WebhookOutcome {
  readonly status: number;
  readonly body: { received: true; event: string; outcome: 'credited' | 'taken_back' | 'duplicate' | 'ignored'; reason?: string };
  /** Worth the operator's attention (money paid that credits nothing, a reversal the balance could not cover). */
  readonly warning?: string;
}

type Decision = Omit<WebhookOutcome['body'], 'received' | 'event'> & { readonly status?: number; readonly warning?: string };

/** The store failed: 503, so the provider delivers the event again. */
async function storeCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new GatewayError('ledger_unavailable', { headers: { 'retry-after': '5' }, cause: error });
  }
}

/**
 * A completed Checkout Session: credits its account `amount_total` cents ÷ 100 USD once, however often it
 * is delivered (the payment row and the credit are one transaction; the ledger request id is
 * `stripe:<session id>`). An unpaid session (a delayed payment method: its async_payment_succeeded comes
 * later), a non-USD one, one naming no account or an unknown one change nothing and are answered 200.
 */
export async function creditCheckout(store: Store, fact: Extract<PaymentFact, { kind: 'checkout' }>, now = Date.now()): Promise<Decision> {
  if (!fact.paid) return { outcome: 'ignored', reason: 'unpaid' };
  if (fact.accountId === null) return { outcome: 'ignored', reason: 'no_account' };
  if (fact.currency !== 'usd') return { outcome: 'ignored', reason: 'not_usd', warning: `checkout ${fact.sessionId} for account ${fact.accountId} was paid in ${fact.currency}: not credited` };
  if (fact.amountCents === null || !Number.isSafeInteger(fact.amountCents) || fact.amountCents <= 0) return { outcome: 'ignored', reason: 'no_amount' };
  const amount = centsToNano(fact.amountCents);
  const outcome = await storeCall(() =>
    store.payments.recordPaid({
      sessionId: fact.sessionId,
      paymentIntent: fact.paymentIntent,
      accountId: fact.accountId!,
      keyId: fact.keyId,
      amount,
      requestId: checkoutRequestId(fact.sessionId),
      note: `Stripe Checkout ${fact.sessionId}${fact.paymentIntent ? ` (payment ${fact.paymentIntent})` : ''}`,
      now,
    }),
  );
  switch (outcome) {
    case 'applied':
      return { outcome: 'credited' };
    case 'duplicate':
      return { outcome: 'duplicate' };
    case 'missing':
      return { outcome: 'ignored', reason: 'unknown_account', warning: `checkout ${fact.sessionId} names account ${fact.accountId}, which does not exist here: ${formatUsd(amount)} USD paid, not credited` };
    case 'over_maximum':
      // A retry may fit once the account has spent: 409, so Stripe delivers it again (and shows it failing).
      return { status: 409, outcome: 'ignored', reason: 'over_maximum', warning: `checkout ${fact.sessionId} would take account ${fact.accountId} past the ledger's maximum: not credited yet` };
  }
}

/**
 * A refund (cumulative `amount_refunded`: what is newly refunded) or a dispute (once per dispute id) of a
 * recorded payment: one negative adjustment of its account, named after the payment, never below the
 * account's available balance — what it cannot cover is recorded on the payment as unrecovered (ADR 0050).
 * A charge of no recorded payment, or not in USD, changes nothing (200).
 */
export async function takeBackPayment(store: Store, fact: Extract<PaymentFact, { kind: 'refund' | 'dispute' }>, now = Date.now()): Promise<Decision> {
  if (fact.currency !== 'usd') return { outcome: 'ignored', reason: 'not_usd' };
  const payment = fact.paymentIntent === null ? undefined : await storeCall(() => store.payments.byPaymentIntent(fact.paymentIntent!));
  if (!payment && fact.kind === 'refund' && fact.accountId !== null) {
    // A charge of a checkout this gateway made, whose credit is not recorded yet (its own delivery is
    // being retried): 409, so Stripe delivers the refund again after the credit.
    return { status: 409, outcome: 'ignored', reason: 'payment_not_recorded', warning: `refund of charge ${fact.chargeId} for account ${fact.accountId} arrived before its checkout's credit: Stripe will retry it` };
  }
  if (!payment) return { outcome: 'ignored', reason: 'unknown_payment' };
  const reversal =
    fact.kind === 'refund'
      ? { kind: 'refund' as const, id: `refund:${fact.chargeId}:${fact.amountRefundedCents}`, amount: centsToNano(fact.amountRefundedCents), note: `Stripe refund of checkout ${payment.sessionId} (charge ${fact.chargeId})` }
      : { kind: 'dispute' as const, id: `dispute:${fact.disputeId}`, amount: centsToNano(fact.amountCents), note: `Stripe dispute ${fact.disputeId} of checkout ${payment.sessionId} (charge ${fact.chargeId})` };
  const result = await storeCall(() => store.payments.reverse({ ...reversal, paymentIntent: fact.paymentIntent!, now }));
  if (result.outcome === 'unknown_payment') return { outcome: 'ignored', reason: 'unknown_payment' };
  if (result.outcome === 'duplicate') return { outcome: 'duplicate' };
  const short = result.taken - result.debited;
  return short > 0
    ? { outcome: 'taken_back', warning: `${reversal.kind} of checkout ${payment.sessionId}: ${formatUsd(short)} USD exceeded account ${payment.accountId}'s available balance and was not recovered` }
    : { outcome: 'taken_back' };
}

/** POST /webhooks/<provider>: the verified event's effect and the answer that tells the provider whether to retry. */
export async function applyPaymentEvent(store: Store, event: WebhookEvent, now = Date.now()): Promise<WebhookOutcome> {
  const { fact } = event;
  const decision: Decision =
    fact.kind === 'checkout' ? await creditCheckout(store, fact, now) : fact.kind === 'other' ? { outcome: 'ignored', reason: 'event_type' } : await takeBackPayment(store, fact, now);
  const { status = 200, warning, ...body } = decision;
  return { status, body: { received: true, event: event.id, ...body }, ...(warning ? { warning } : {}) };
}

export interface PaymentJson {
  object: 'payment';
  id: string;
  provider: 'stripe';
  payment_intent: string | null;
  account_id: string;
  key_id: string | null;
  /** USD credited. */
  amount: number;
  refunded: number;
  disputed: number;
  /** Of refunded and disputed, what the account's available balance could not cover. */
  unrecovered: number;
  created_at: string;
}

export function paymentObject(payment: PaymentRecord): PaymentJson {
  return {
    object: 'payment',
    id: payment.sessionId,
    provider: 'stripe',
    payment_intent: payment.paymentIntent,
    account_id: payment.accountId,
    key_id: payment.keyId,
    amount: nanoToUsd(payment.amount),
    refunded: nanoToUsd(payment.refunded),
    disputed: nanoToUsd(payment.disputed),
    unrecovered: nanoToUsd(payment.unrecovered),
    created_at: new Date(payment.createdAt).toISOString(),
  };
}

export interface PaymentListInput {
  readonly account_id?: unknown;
  readonly limit?: unknown;
  readonly after?: unknown;
}

type Position = [number, string];
const isPosition = (p: unknown): p is Position => Array.isArray(p) && p.length === 2 && Number.isSafeInteger(p[0]) && typeof p[1] === 'string';

/** GET /admin/v1/payments, `tollgate payments list`: newest first, optionally one account's. */
export async function listPayments(store: Store, input: PaymentListInput): Promise<ListPage<PaymentJson>> {
  const limit = pageSize(input.limit);
  if (input.account_id !== undefined && (typeof input.account_id !== 'string' || input.account_id === '')) {
    throw new GatewayError('invalid_request', { param: 'account_id', message: "Invalid 'account_id': expected an account id." });
  }
  const after = input.after === undefined ? undefined : decodeCursor('payments', input.after, isPosition);
  const rows = await store.payments.page({
    ...(input.account_id !== undefined ? { accountId: input.account_id as string } : {}),
    ...(after ? { before: { createdAt: after[0], sessionId: after[1] } } : {}),
    limit: limit + 1,
  });
  return listPage('payments', rows, limit, paymentObject, (p): Position => [p.createdAt, p.sessionId]);
}
