// Stripe, through the official SDK (docs/adr/0050-stripe-top-ups.md): Checkout Sessions in payment mode
// for one line item of USD credit, and webhook events verified with stripe.webhooks.constructEvent over
// the exact bytes received. Only the configured host is contacted (Stripe's API, or payments.stripe.api_base).
import Stripe from 'stripe';
import type { StripeConfig } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import type { CheckoutOrder, PaymentProvider, StartedCheckout, WebhookEvent } from '../types.js';
import { factOf } from './events.js';

/** How long one API call may take, and how often the SDK retries a network failure or a 5xx (with the same idempotency key). */
const TIMEOUT_MS = 20_000;
const NETWORK_RETRIES = 2;
/** The product name on Stripe's payment page and receipt. */
const PRODUCT_NAME = 'Tollgate credit';

function clientOptions(config: StripeConfig): Stripe.StripeConfig {
  const options: Stripe.StripeConfig = { timeout: TIMEOUT_MS, maxNetworkRetries: NETWORK_RETRIES, telemetry: false, appInfo: { name: 'Tollgate' } };
  const base = config.apiBase;
  if (base === undefined) return options;
  const protocol = base.protocol === 'http:' ? 'http' : 'https';
  return { ...options, host: base.hostname, port: Number(base.port || (protocol === 'http' ? 80 : 443)), protocol };
}

export function stripeProvider(config: StripeConfig): PaymentProvider {
  const stripe = new Stripe(config.secretKey, clientOptions(config));
  return {
    async startCheckout(order: CheckoutOrder): Promise<StartedCheckout> {
      const metadata: Record<string, string> = { tollgate_account_id: order.accountId };
      if (order.keyId !== null) metadata.tollgate_key_id = order.keyId;
      let session: Stripe.Checkout.Session;
      try {
        session = await stripe.checkout.sessions.create(
          {
            mode: 'payment',
            line_items: [{ quantity: 1, price_data: { currency: config.currency, unit_amount: order.amountCents, product_data: { name: PRODUCT_NAME } } }],
            client_reference_id: order.accountId,
            metadata,
            // Copied to the PaymentIntent (and so named by its charges): a refund or dispute found in Stripe's dashboard names the account.
            payment_intent_data: { metadata },
            success_url: config.successUrl,
            cancel_url: config.cancelUrl,
          },
          { idempotencyKey: order.idempotencyKey },
        );
      } catch (error) {
        const status = error instanceof Stripe.errors.StripeError ? error.statusCode : undefined;
        throw new GatewayError('payment_provider_error', {
          message: `Stripe could not start the checkout${status ? ` (HTTP ${status})` : ''}; retry shortly.`,
          cause: error,
        });
      }
      if (!session.url) throw new GatewayError('payment_provider_error', { message: 'Stripe answered a Checkout Session without a URL.' });
      return { id: session.id, url: session.url, amountCents: session.amount_total ?? order.amountCents };
    },

    async readWebhook(body: Buffer, signature: string | undefined): Promise<WebhookEvent> {
      if (signature === undefined || signature === '') throw new GatewayError('invalid_webhook_signature', { message: 'The request has no Stripe-Signature header.' });
      let event: Stripe.Event;
      try {
        // Checks the HMAC over these bytes and the timestamp's age (300 s: an old delivery replayed is refused).
        event = stripe.webhooks.constructEvent(body, signature, config.webhookSecret);
      } catch (error) {
        throw new GatewayError('invalid_webhook_signature', { cause: error });
      }
      return { id: event.id, type: event.type, fact: factOf(event) };
    },
  };
}
