// POST /webhooks/stripe (docs/adr/0050-stripe-top-ups.md): Stripe's deliveries, no Tollgate credential —
// the Stripe-Signature header over the exact bytes received is the proof. Its own encapsulated plugin
// whose only body parser keeps the raw bytes (any content type), so nothing re-serialises the body
// before the SDK checks its signature. Thin: verify (payments/), decide (operations/payments.ts), answer.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import { applyPaymentEvent } from '../../operations/payments.js';
import type { PaymentProvider } from '../../payments/types.js';
import type { Store } from '../../storage/types.js';

/** Stripe's events are a few kilobytes; a megabyte is far past any. */
const WEBHOOK_BODY_LIMIT = 1_048_576;

export interface StripeWebhookDeps {
  readonly store: Store;
  readonly config: Config;
  readonly payments: PaymentProvider | undefined;
  readonly log: Logger;
}

export function registerStripeWebhook(app: FastifyInstance, deps: StripeWebhookDeps): void {
  app.register(async function stripeWebhook(hooks) {
    hooks.removeAllContentTypeParsers();
    hooks.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, function rawBytes(_request, body, done) {
      done(null, body);
    });
    hooks.post('/webhooks/stripe', async function stripeEvent(request, reply) {
      if (!deps.payments) throw new GatewayError('payments_disabled');
      const signature = request.headers['stripe-signature'];
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const event = await deps.payments.readWebhook(body, typeof signature === 'string' ? signature : undefined);
      const outcome = await applyPaymentEvent(deps.store, event);
      const { received: _received, ...said } = outcome.body;
      const line = { requestId: request.id, type: event.type, ...said };
      if (outcome.warning) deps.log.warn({ ...line, problem: outcome.warning }, 'stripe webhook');
      else deps.log.info(line, 'stripe webhook');
      return reply.code(outcome.status).type('application/json').send(JSON.stringify(outcome.body));
    });
  });
}
