// Stripe events as the ledger's facts (docs/adr/0050-stripe-top-ups.md): a completed Checkout Session
// (or its delayed payment succeeding), a charge refunded, a dispute opened; every other event is `other`.
import type Stripe from 'stripe';
import type { PaymentFact } from '../types.js';

const idOf = (value: string | { readonly id: string } | null | undefined): string | null => (value == null ? null : typeof value === 'string' ? value : value.id);

export function factOf(event: Stripe.Event): PaymentFact {
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded': {
      const session = event.data.object;
      return {
        kind: 'checkout',
        sessionId: session.id,
        paymentIntent: idOf(session.payment_intent),
        accountId: session.client_reference_id ?? null,
        keyId: session.metadata?.tollgate_key_id ?? null,
        paid: session.payment_status === 'paid',
        amountCents: session.amount_total ?? null,
        currency: session.currency ?? null,
      };
    }
    case 'charge.refunded': {
      const charge = event.data.object;
      return {
        kind: 'refund',
        chargeId: charge.id,
        paymentIntent: idOf(charge.payment_intent),
        amountRefundedCents: charge.amount_refunded,
        currency: charge.currency,
        // The PaymentIntent's metadata (set at checkout) is copied to its charges.
        accountId: charge.metadata?.tollgate_account_id ?? null,
      };
    }
    case 'charge.dispute.created': {
      const dispute = event.data.object;
      return { kind: 'dispute', disputeId: dispute.id, chargeId: idOf(dispute.charge) ?? '', paymentIntent: idOf(dispute.payment_intent), amountCents: dispute.amount, currency: dispute.currency };
    }
    default:
      return { kind: 'other' };
  }
}
