// operations/payments.ts (docs/adr/0050-stripe-top-ups.md): the checkout's input checks (no provider call
// on bad input), and each webhook decision with the HTTP status that tells Stripe whether to deliver
// again — a database failure is 503 (retry), everything a retry cannot change is 200.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Config } from '../../../src/config/types.js';
import { isGatewayError } from '../../../src/errors.js';
import { applyPaymentEvent, NANO_PER_CENT, startCheckout } from '../../../src/operations/payments.js';
import type { CheckoutOrder, PaymentFact, PaymentProvider } from '../../../src/payments/types.js';
import type { AccountRecord, NewPayment, PaymentOutcome, PaymentRecord, PaymentReversal, ReversalResult, Store } from '../../../src/storage/types.js';

const USD = 1_000_000_000;
const config = { payments: { stripe: { minAmount: 5 * USD, maxAmount: 500 * USD, currency: 'usd' } } } as unknown as Config;
const account = { id: 'acct_1', status: 'suspended' } as AccountRecord;

function provider(): PaymentProvider & { orders: CheckoutOrder[] } {
  const orders: CheckoutOrder[] = [];
  return {
    orders,
    async startCheckout(order) {
      orders.push(order);
      return { id: 'cs_1', url: 'https://checkout.stripe.com/c/pay/cs_1', amountCents: order.amountCents };
    },
    async readWebhook() {
      throw new Error('not used');
    },
  };
}

const PAYMENT: PaymentRecord = { sessionId: 'cs_1', paymentIntent: 'pi_1', accountId: 'acct_1', keyId: null, amount: USD, refunded: 0, disputed: 0, unrecovered: 0, createdAt: 0 };

function storeAnswering(recordPaid: (p: NewPayment) => Promise<PaymentOutcome>, reverse: (r: PaymentReversal) => Promise<ReversalResult> = async () => ({ outcome: 'duplicate', payment: PAYMENT })) {
  const recorded: NewPayment[] = [];
  const reversed: PaymentReversal[] = [];
  const store = {
    payments: {
      recordPaid: (p: NewPayment) => (recorded.push(p), recordPaid(p)),
      reverse: (r: PaymentReversal) => (reversed.push(r), reverse(r)),
      byPaymentIntent: async (pi: string) => (pi === 'pi_1' ? PAYMENT : undefined),
    },
  } as unknown as Store;
  return { store, recorded, reversed };
}

const checkout = (overrides: Partial<Extract<PaymentFact, { kind: 'checkout' }>> = {}): PaymentFact => ({
  kind: 'checkout',
  sessionId: 'cs_1',
  paymentIntent: 'pi_1',
  accountId: 'acct_1',
  keyId: 'key_1',
  paid: true,
  amountCents: 2_550,
  currency: 'usd',
  ...overrides,
});

describe('startCheckout', () => {
  test('whole cents within the bounds start one checkout, with the Idempotency-Key’s id; a suspended account may buy credit', async () => {
    const p = provider();
    const answer = await startCheckout(p, config, account, null, { amount: '25.50' }, 'idem_abc');
    assert.deepEqual(answer, { object: 'checkout_session', id: 'cs_1', url: 'https://checkout.stripe.com/c/pay/cs_1', amount: 25.5, currency: 'usd', account_id: 'acct_1' });
    assert.deepEqual(p.orders, [{ accountId: 'acct_1', keyId: null, amountCents: 2_550, idempotencyKey: 'tollgate-checkout-idem_abc' }]);
    await startCheckout(p, config, account, null, { amount: 5 }, undefined);
    await startCheckout(p, config, account, null, { amount: 500 }, undefined);
    assert.match(p.orders[1]!.idempotencyKey, /^tollgate-checkout-[0-9a-f-]{36}$/);
    assert.notEqual(p.orders[1]!.idempotencyKey, p.orders[2]!.idempotencyKey);
  });

  test('bad amounts are 400 naming amount, and the provider is not called', async () => {
    const p = provider();
    for (const amount of [4.99, 500.01, '0.001', 0, -5, 'x', undefined, null]) {
      await assert.rejects(startCheckout(p, config, account, null, { amount }, undefined), (e) => isGatewayError(e) && e.code === 'invalid_request' && e.param === 'amount', String(amount));
    }
    assert.equal(p.orders.length, 0);
  });

  test('without payments.stripe: 404 payments_disabled', async () => {
    const off = { payments: { stripe: undefined } } as unknown as Config;
    await assert.rejects(startCheckout(undefined, off, account, null, { amount: 10 }, undefined), (e) => isGatewayError(e) && e.code === 'payments_disabled' && e.status === 404);
  });
});

describe('applyPaymentEvent', () => {
  const event = (fact: PaymentFact) => ({ id: 'evt_1', type: 't', fact });

  test('a paid checkout is recorded with its exact credit: cents × 10^7 nano-dollars, request id stripe:<session>', async () => {
    const { store, recorded } = storeAnswering(async () => 'applied');
    const outcome = await applyPaymentEvent(store, event(checkout({ amountCents: 99_999_999 })), 7);
    assert.deepEqual(outcome, { status: 200, body: { received: true, event: 'evt_1', outcome: 'credited' } });
    assert.equal(recorded[0]!.amount, 999_999_990_000_000);
    assert.equal(recorded[0]!.amount, 99_999_999 * NANO_PER_CENT);
    assert.deepEqual([recorded[0]!.requestId, recorded[0]!.accountId, recorded[0]!.keyId, recorded[0]!.now], ['stripe:cs_1', 'acct_1', 'key_1', 7]);
  });

  test('each outcome and the status Stripe reads from it', async () => {
    const cases: [PaymentFact, PaymentOutcome, number, string, string | undefined][] = [
      [checkout(), 'duplicate', 200, 'duplicate', undefined],
      [checkout(), 'missing', 200, 'ignored', 'unknown_account'],
      [checkout(), 'over_maximum', 409, 'ignored', 'over_maximum'],
      [checkout({ paid: false }), 'applied', 200, 'ignored', 'unpaid'],
      [checkout({ currency: 'eur' }), 'applied', 200, 'ignored', 'not_usd'],
      [checkout({ accountId: null }), 'applied', 200, 'ignored', 'no_account'],
      [checkout({ amountCents: null }), 'applied', 200, 'ignored', 'no_amount'],
      [checkout({ amountCents: 0 }), 'applied', 200, 'ignored', 'no_amount'],
      [{ kind: 'other' }, 'applied', 200, 'ignored', 'event_type'],
    ];
    for (const [fact, stored, status, outcome, reason] of cases) {
      const { store, recorded } = storeAnswering(async () => stored);
      const answer = await applyPaymentEvent(store, event(fact));
      assert.deepEqual([answer.status, answer.body.outcome, answer.body.reason], [status, outcome, reason], JSON.stringify(fact));
      if (outcome === 'ignored' && reason !== 'unknown_account' && reason !== 'over_maximum') assert.equal(recorded.length, 0, 'nothing asked of the store');
    }
  });

  test('a database failure is 503 ledger_unavailable, so Stripe delivers the event again', async () => {
    const down = storeAnswering(
      async () => Promise.reject(new Error('SQLITE_BUSY')),
      async () => Promise.reject(new Error('connection refused')),
    );
    for (const fact of [checkout(), { kind: 'refund', chargeId: 'ch_1', paymentIntent: 'pi_1', amountRefundedCents: 100, currency: 'usd', accountId: null } as const]) {
      await assert.rejects(applyPaymentEvent(down.store, event(fact)), (e) => isGatewayError(e) && e.code === 'ledger_unavailable' && e.status === 503);
    }
  });

  test('a refund names its cumulative amount and the payment; a dispute its id; an unknown payment or another currency changes nothing', async () => {
    const { store, reversed } = storeAnswering(async () => 'applied', async () => ({ outcome: 'applied', payment: PAYMENT, taken: 10 * NANO_PER_CENT, debited: 10 * NANO_PER_CENT }));
    const refund = await applyPaymentEvent(store, event({ kind: 'refund', chargeId: 'ch_1', paymentIntent: 'pi_1', amountRefundedCents: 10, currency: 'usd', accountId: null }));
    assert.equal(refund.body.outcome, 'taken_back');
    assert.deepEqual([reversed[0]!.id, reversed[0]!.amount, reversed[0]!.note], ['refund:ch_1:10', 10 * NANO_PER_CENT, 'Stripe refund of checkout cs_1 (charge ch_1)']);
    await applyPaymentEvent(store, event({ kind: 'dispute', disputeId: 'dp_1', chargeId: 'ch_1', paymentIntent: 'pi_1', amountCents: 25, currency: 'usd' }));
    assert.deepEqual([reversed[1]!.id, reversed[1]!.kind, reversed[1]!.note], ['dispute:dp_1', 'dispute', 'Stripe dispute dp_1 of checkout cs_1 (charge ch_1)']);
    for (const fact of [
      { kind: 'refund', chargeId: 'ch_2', paymentIntent: 'pi_other', amountRefundedCents: 10, currency: 'usd', accountId: null },
      { kind: 'refund', chargeId: 'ch_2', paymentIntent: null, amountRefundedCents: 10, currency: 'usd', accountId: null },
      { kind: 'dispute', disputeId: 'dp_2', chargeId: 'ch_1', paymentIntent: 'pi_1', amountCents: 10, currency: 'eur' },
    ] as PaymentFact[]) {
      const answer = await applyPaymentEvent(store, event(fact));
      assert.deepEqual([answer.status, answer.body.outcome], [200, 'ignored']);
    }
    assert.equal(reversed.length, 2);
  });

  test("a refund of a checkout this gateway made, before that checkout's credit is recorded, is 409 so Stripe retries it", async () => {
    const { store, reversed } = storeAnswering(async () => 'applied');
    const early = await applyPaymentEvent(store, event({ kind: 'refund', chargeId: 'ch_9', paymentIntent: 'pi_not_yet', amountRefundedCents: 10, currency: 'usd', accountId: 'acct_1' }));
    assert.deepEqual([early.status, early.body.outcome, early.body.reason], [409, 'ignored', 'payment_not_recorded']);
    assert.match(early.warning!, /arrived before its checkout's credit/);
    assert.equal(reversed.length, 0);
  });

  test('a reversal the balance cannot cover is taken back in part, with a warning for the operator', async () => {
    const { store } = storeAnswering(async () => 'applied', async () => ({ outcome: 'applied', payment: PAYMENT, taken: USD, debited: USD / 4 }));
    const answer = await applyPaymentEvent(store, event({ kind: 'refund', chargeId: 'ch_1', paymentIntent: 'pi_1', amountRefundedCents: 100, currency: 'usd', accountId: null }));
    assert.equal(answer.body.outcome, 'taken_back');
    assert.match(answer.warning!, /0\.75 USD exceeded account acct_1's available balance/);
  });
});
