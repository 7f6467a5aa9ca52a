// The payment provider port (docs/adr/0050-stripe-top-ups.md): what the gateway asks of a provider —
// start a checkout, and read a verified webhook delivery as one of the facts the ledger acts on. Stripe's
// specifics live only in ./stripe/; the decisions (credit, take back) in operations/payments.ts.

/** A checkout to start: `amountCents` USD for `accountId`, started by `keyId` when a key asked. */
export interface CheckoutOrder {
  readonly accountId: string;
  readonly keyId: string | null;
  readonly amountCents: number;
  /** Sent to the provider, so a retried request makes one session. */
  readonly idempotencyKey: string;
}

export interface StartedCheckout {
  readonly id: string;
  /** Where the customer's browser goes to pay. */
  readonly url: string;
  readonly amountCents: number;
}

/** What a verified webhook event says, in the ledger's terms. */
export type PaymentFact =
  | {
      /** A Checkout Session completed (or its delayed payment succeeded). */
      readonly kind: 'checkout';
      readonly sessionId: string;
      readonly paymentIntent: string | null;
      /** client_reference_id: the account the gateway named when it made the session. */
      readonly accountId: string | null;
      readonly keyId: string | null;
      /** Only a paid session is credited. */
      readonly paid: boolean;
      readonly amountCents: number | null;
      readonly currency: string | null;
    }
  | {
      readonly kind: 'refund';
      readonly chargeId: string;
      readonly paymentIntent: string | null;
      /** Cumulative: everything refunded of the charge so far. */
      readonly amountRefundedCents: number;
      readonly currency: string;
      /** The account the charge's metadata names (a checkout the gateway made), if any. */
      readonly accountId: string | null;
    }
  | {
      readonly kind: 'dispute';
      readonly disputeId: string;
      readonly chargeId: string;
      readonly paymentIntent: string | null;
      readonly amountCents: number;
      readonly currency: string;
    }
  /** An event the gateway does not act on (answered 2xx: Stripe need not send it again). */
  | { readonly kind: 'other' };

export interface WebhookEvent {
  readonly id: string;
  readonly type: string;
  readonly fact: PaymentFact;
}

export interface PaymentProvider {
  startCheckout(order: CheckoutOrder): Promise<StartedCheckout>;
  /**
   * The delivery's event, verified against the signing secret over the exact bytes received; throws
   * GatewayError invalid_webhook_signature when it does not verify (or is too old: a replay).
   */
  readWebhook(body: Buffer, signature: string | undefined): Promise<WebhookEvent>;
}
