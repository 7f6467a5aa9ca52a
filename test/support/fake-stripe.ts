// A local fake of the Stripe endpoints the gateway calls (POST /v1/checkout/sessions), recording every
// request, so the real `stripe` SDK inside the gateway can be driven end to end; and webhook deliveries
// signed with the SDK's own test-header helper (stripe.webhooks.generateTestHeaderString).
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

export const STRIPE_SECRET_KEY = 'sk_test_tollgate_fake_0123456789';
export const STRIPE_WEBHOOK_SECRET = `whsec_${randomBytes(24).toString('hex')}`;

export interface StripeRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string | string[] | undefined>;
  /** The form-encoded body, decoded (`line_items[0][price_data][unit_amount]` → its value). */
  readonly form: Record<string, string>;
}

export interface FakeStripe {
  readonly url: string;
  readonly requests: StripeRequest[];
  /** The next POST /v1/checkout/sessions answers this status with a Stripe error (once). */
  failNext(status: number): void;
  close(): Promise<void>;
}

export interface FakeStripeOptions {
  /** Sessions' urls point at this fake (GET /c/pay/<id> answers a page), so a browser can follow them. */
  readonly localCheckout?: boolean;
}

export async function startFakeStripe(options: FakeStripeOptions = {}): Promise<FakeStripe> {
  let origin = 'https://checkout.stripe.com';
  const requests: StripeRequest[] = [];
  const sessions = new Map<string, unknown>();
  let failure: number | undefined;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      const path = (req.url ?? '').split('?')[0]!;
      // The Checkout page a browser follows, and its favicon (not API calls: not recorded).
      if (req.method === 'GET' && !path.startsWith('/v1/')) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(`<!doctype html><title>Fake Stripe Checkout</title><h1 data-session="${path.slice('/c/pay/'.length)}">Fake Stripe Checkout</h1>`);
        return;
      }
      requests.push({ method: req.method ?? '', path, headers: req.headers, form });
      const answer = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${randomBytes(6).toString('hex')}` });
        res.end(JSON.stringify(body));
      };
      if (req.headers.authorization !== `Bearer ${STRIPE_SECRET_KEY}`) return answer(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
      if (req.method !== 'POST' || path !== '/v1/checkout/sessions') return answer(404, { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${req.method}: ${path})` } });
      if (failure !== undefined) {
        const status = failure;
        failure = undefined;
        return answer(status, { error: { type: status >= 500 ? 'api_error' : 'invalid_request_error', message: 'fake failure' } });
      }
      // Stripe answers a repeated Idempotency-Key with the first answer.
      const idempotencyKey = String(req.headers['idempotency-key'] ?? '');
      const known = sessions.get(idempotencyKey);
      if (known) return answer(200, known);
      const id = `cs_test_${randomBytes(12).toString('hex')}`;
      const session = {
        id,
        object: 'checkout.session',
        mode: form.mode,
        status: 'open',
        payment_status: 'unpaid',
        amount_total: Number(form['line_items[0][price_data][unit_amount]']) * Number(form['line_items[0][quantity]'] ?? 1),
        currency: form['line_items[0][price_data][currency]'],
        client_reference_id: form.client_reference_id ?? null,
        metadata: Object.fromEntries(Object.entries(form).filter(([k]) => k.startsWith('metadata[')).map(([k, v]) => [k.slice('metadata['.length, -1), v])),
        success_url: form.success_url,
        cancel_url: form.cancel_url,
        payment_intent: null,
        url: `${origin}/c/pay/${id}`,
      };
      sessions.set(idempotencyKey, session);
      answer(200, session);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  if (options.localCheckout) origin = `http://127.0.0.1:${port}`;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    failNext(status) {
      failure = status;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** payments.stripe for a gateway in front of the fake (append to mockConfig's YAML). */
export function stripeConfigYaml(fake: FakeStripe, extra = ''): string {
  return `payments:
  stripe:
    secret_key: \${STRIPE_SECRET_KEY}
    webhook_secret: \${STRIPE_WEBHOOK_SECRET}
    currency: usd
    min_amount: 5
    max_amount: 500
    success_url: https://example.com/paid?session={CHECKOUT_SESSION_ID}
    cancel_url: https://example.com/cancelled
    api_base: ${fake.url}
${extra}`;
}

export const stripeEnv = { STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET };

const signer = new Stripe(STRIPE_SECRET_KEY);
let eventSeq = 0;

/** An event as Stripe sends it: pretty-printed, so a gateway that re-serialised the body before checking its signature would fail. */
export function stripeEvent(type: string, object: Record<string, unknown>): string {
  return JSON.stringify({ id: `evt_test_${++eventSeq}_${randomBytes(4).toString('hex')}`, object: 'event', api_version: Stripe.API_VERSION, created: Math.floor(Date.now() / 1000), type, livemode: false, pending_webhooks: 1, request: { id: null, idempotency_key: null }, data: { object } }, null, 2);
}

/** The Stripe-Signature header of `payload` (the SDK's own helper), with the secret the gateway has unless told otherwise. */
export function signatureOf(payload: string, secret = STRIPE_WEBHOOK_SECRET, timestamp?: number): string {
  return signer.webhooks.generateTestHeaderString({ payload, secret, ...(timestamp !== undefined ? { timestamp } : {}) });
}

/** A completed Checkout Session's object. */
export function checkoutSession(overrides: Record<string, unknown>): Record<string, unknown> {
  return { object: 'checkout.session', mode: 'payment', status: 'complete', payment_status: 'paid', currency: 'usd', metadata: {}, ...overrides };
}
