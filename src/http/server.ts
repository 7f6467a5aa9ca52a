// The HTTP server: Fastify with its body limits and JSON parser, one error renderer, key auth on /v1
// (account-token auth on /v1/account).
import Fastify, { type FastifyInstance } from 'fastify';
import type { TrustProxy } from '../config/trust-proxy.js';
import { GatewayError } from '../errors.js';
import { newRequestId } from '../request-id.js';
import type { KeyRecord } from '../storage/types.js';
import { authenticate, HOLDING_REQUEST_KEY_MAX_AGE_MS } from './auth.js';
import { clientErrorHandler } from './client-error.js';
import { registerCors } from './cors.js';
import { registerDashboard } from './dashboard.js';
import { gatewayJsonParser } from './json-body.js';
import type { ClientApiRoutes, ServerDeps } from './deps.js';
import { addRateLimitHeaders } from './rate-limit-headers.js';
import { errorRenderer, sendError } from './render-error.js';
import { registerRequestEnd } from './request-end.js';
import { registerAccountApi } from './routes/account.js';
import { InProcessRateLimiter } from '../limits/in-process-limiter.js';
import { RedeemGuard } from '../limits/redeem-guard.js';
import { registerAdminApi } from './routes/admin/index.js';
import { registerKeyRoute } from './routes/key.js';
import { registerKeyUsageRoutes } from './routes/key-usage.js';
import { registerModelRoutes } from './routes/models.js';
import { registerOpsRoutes } from './routes/ops.js';
import { registerStripeWebhook } from './routes/stripe-webhook.js';
import { paymentProvider } from '../payments/open-provider.js';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: KeyRecord | null;
  }
}


const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * How often Node checks the headers and request deadlines (its default, 30 s, let a slow-header client
 * hold a socket for the timeout plus up to 30 s). One walk of the connection list per second is cheap.
 */
const DEADLINE_CHECK_MS = 1_000;

/**
 * `server.trust_proxy` as Fastify's option (proxy-addr reads X-Forwarded-For with it). A hop count is a
 * function: Fastify takes a bare number as "trust nobody" (a hop count cannot tell a proxy from a client
 * that connects directly), while an operator who writes `1` means proxy-addr's "trust the nearest hop".
 */
function trustProxyOption(trust: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return typeof trust === 'boolean' ? trust : [...trust];
}

/** `apis`: the client APIs to serve under /v1 (main.ts hands them over; the server names none). */
export function buildServer(deps: ServerDeps, apis: readonly ClientApiRoutes[]): FastifyInstance {
  const { server } = deps.config;
  const app = Fastify({
    logger: false,
    bodyLimit: server.maxBodyBytes,
    http: {
      headersTimeout: server.headersTimeoutMs,
      requestTimeout: server.requestTimeoutMs,
      connectionsCheckingInterval: DEADLINE_CHECK_MS,
    },
    requestTimeout: server.requestTimeoutMs,
    keepAliveTimeout: server.keepAliveTimeoutMs,
    genReqId: newRequestId,
    trustProxy: trustProxyOption(server.trustProxy),
    requestIdHeader: false,
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    clientErrorHandler: clientErrorHandler(deps.log),
  });
  // JSON only: any other body type is a 415 from the parser.
  app.removeContentTypeParser(['text/plain', 'application/json']);
  // Fastify's own parser (poisoned __proto__/constructor keys are errors, its default), depth-limited.
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, gatewayJsonParser(app));
  app.decorateRequest('apiKey', null);
  app.decorateRequest('rawBody', undefined);
  app.decorateRequest('rawBytes', undefined);
  registerRequestEnd(app, deps.config, deps.metrics, deps.log, deps.outcomes, apis);

  app.addHook('onRequest', function stampRequestId(request, reply, done) {
    reply.header('x-request-id', request.id);
    if (deps.isClosing()) done(new GatewayError('shutting_down', { headers: { 'retry-after': '5' } }));
    else done();
  });
  // The OpenAI envelope (product.md §6) for every route but a client API's, which brings its own.
  app.setErrorHandler(errorRenderer(deps, (error) => error.toBody()));
  app.setNotFoundHandler(function notFound(request, reply) {
    const error = new GatewayError('not_found', { message: `No route for ${request.method} ${request.url.split('?')[0]}.` });
    request.answeredError = error;
    return sendError(reply, error, error.toBody());
  });

  app.get('/health', async function health(_request, reply) {
    return reply.type('application/json').send('{"status":"ok"}');
  });
  // Claude Code's start-up probes: a HEAD of the base URL (and of /api/hello) must answer 200, with no key.
  for (const url of ['/', '/api/hello']) {
    app.head(url, async function probe(_request, reply) {
      return reply.code(200).send();
    });
  }
  registerOpsRoutes(app, deps.config, deps.metrics, deps.probe, deps.isClosing);
  app.register(registerDashboard, { operator: deps.config.admin.token !== undefined });
  registerAdminApi(app, { store: deps.store, config: deps.config, health: deps.health, log: deps.log });
  // Beside /v1's routes, not among them: an account token authenticates here, and only here.
  const payments = paymentProvider(deps.config);
  registerAccountApi(app, {
    store: deps.store,
    config: deps.config,
    limiter: deps.limiter,
    redeemGuard: deps.redeemGuard ?? new RedeemGuard(new InProcessRateLimiter({ windowMs: deps.config.limits.redeemWindowSeconds * 1000 }), deps.config.limits.redeemFailures),
    payments,
  });
  // Stripe's deliveries: no Tollgate credential, the signature over the raw body (docs/adr/0050-stripe-top-ups.md).
  registerStripeWebhook(app, { store: deps.store, config: deps.config, payments, log: deps.log });

  app.register(
    async function v1(api) {
      // Before the key check: a browser's preflight carries no key.
      await registerCors(api, deps.config.server.corsOrigins);
      api.addHook('onRequest', async function requireKey(request) {
        // A POST (chat, embeddings) places a hold that re-checks the key, unless it is a dry run (a quote
        // shows the key's balance, so it reads it now).
        const holding = request.method === 'POST' && request.headers['x-tollgate-dry-run'] !== '1';
        request.apiKey = await authenticate(deps.keys, request.headers, holding ? HOLDING_REQUEST_KEY_MAX_AGE_MS : 0);
      });
      api.addHook('preHandler', async function rateLimitState(request, reply) {
        // Chat and embeddings set these at admission, counting the request; other answers only read them.
        if (request.method !== 'POST') await addRateLimitHeaders(deps.limiter, deps.config.limits, request, reply);
      });
      api.addHook('preValidation', async function requireJson(request) {
        if (request.method === 'POST' && !JSON_TYPE.test(request.headers['content-type'] ?? '')) {
          throw new GatewayError('unsupported_media_type');
        }
      });
      for (const clientApi of apis) clientApi.register(api, deps);
      registerModelRoutes(api, deps.config);
      registerKeyRoute(api, deps.config);
      registerKeyUsageRoutes(api, deps.store);
    },
    { prefix: '/v1' },
  );
  return app;
}
