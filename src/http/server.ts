// The HTTP server: Fastify with its body limits and JSON parser, one error renderer, key auth on /v1.
import Fastify, { type FastifyInstance } from 'fastify';
import { GatewayError } from '../errors.js';
import type { PipelineDeps } from '../pipeline/deps.js';
import type { InFlightRequests } from '../pipeline/in-flight.js';
import { newRequestId } from '../request-id.js';
import type { IdempotencyStore, KeyRecord, KeyStore } from '../storage/types.js';
import { authenticate } from './auth.js';
import { clientErrorHandler } from './client-error.js';
import { registerDashboard } from './dashboard.js';
import { depthLimitedJsonParser, type JsonBodyParser } from './json-body.js';
import { addRateLimitHeaders } from './rate-limit-headers.js';
import { sendError, toResponseError } from './render-error.js';
import { registerChatRoute } from './routes/chat.js';
import { registerEmbeddingsRoute } from './routes/embeddings.js';
import { registerKeyRoute } from './routes/key.js';
import { registerModelRoutes } from './routes/models.js';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: KeyRecord | null;
  }
}

export interface ServerDeps extends PipelineDeps {
  readonly keys: KeyStore;
  /** Idempotency-Key records (chat and embeddings). */
  readonly idempotency: IdempotencyStore;
  /** Chat and embedding requests still being served (shutdown waits for them to settle). */
  readonly inFlight: InFlightRequests;
  /** True once shutdown began: new requests get 503. */
  readonly isClosing: () => boolean;
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * How often Node checks the headers and request deadlines (its default, 30 s, let a slow-header client
 * hold a socket for the timeout plus up to 30 s). One walk of the connection list per second is cheap.
 */
const DEADLINE_CHECK_MS = 1_000;

export function buildServer(deps: ServerDeps): FastifyInstance {
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
    requestIdHeader: false,
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    clientErrorHandler: clientErrorHandler(deps.log),
  });
  // JSON only: any other body type is a 415 from the parser.
  app.removeContentTypeParser(['text/plain', 'application/json']);
  // Fastify's own parser (poisoned __proto__/constructor keys are errors, its default), depth-limited.
  const parseJson = app.getDefaultJsonParser('error', 'error') as JsonBodyParser;
  app.addContentTypeParser('application/json', { parseAs: 'string' }, depthLimitedJsonParser(parseJson));
  app.decorateRequest('apiKey', null);

  app.addHook('onRequest', function stampRequestId(request, reply, done) {
    reply.header('x-request-id', request.id);
    if (deps.isClosing()) done(new GatewayError('shutting_down', { headers: { 'retry-after': '5' } }));
    else done();
  });
  app.setErrorHandler(async function renderError(error, request, reply) {
    await addRateLimitHeaders(deps.limiter, deps.config.limits, request, reply);
    return sendError(reply, toResponseError(error, deps.log, request.id));
  });
  app.setNotFoundHandler(function notFound(request, reply) {
    return sendError(reply, new GatewayError('not_found', { message: `No route for ${request.method} ${request.url.split('?')[0]}.` }));
  });

  app.get('/health', async function health(_request, reply) {
    return reply.type('application/json').send('{"status":"ok"}');
  });
  app.register(registerDashboard, { operator: false });

  app.register(
    async function v1(api) {
      api.addHook('onRequest', async function requireKey(request) {
        request.apiKey = await authenticate(deps.keys, request.headers.authorization);
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
      registerChatRoute(api, deps);
      registerEmbeddingsRoute(api, deps);
      registerModelRoutes(api, deps.config);
      registerKeyRoute(api, deps.config);
    },
    { prefix: '/v1' },
  );
  return app;
}
