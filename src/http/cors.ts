// CORS for the client API (product.md §10, server.cors_origins): a browser app on a listed origin may
// call /v1 with its key. Preflights from those origins are answered before key auth (a preflight never
// carries the Authorization header); any other origin gets no CORS header at all, so its browser
// refuses to hand the answer to the page.
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/**
 * Headers a browser app needs to read: the request id, rate-limit state, when to retry, whether a retry
 * can help (the SDKs read x-should-retry), a clamp's lowered max_tokens and an idempotent replay.
 */
const EXPOSED_HEADERS = [
  'x-request-id',
  'retry-after',
  'x-should-retry',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-tokens',
  'x-tollgate-max-tokens-clamped',
  'x-tollgate-idempotency',
];

/** Request headers a page may send by name: the key (in any of the forms SDKs send it), the body type, retries. */
const ALLOWED_HEADER_NAMES = new Set(['authorization', 'content-type', 'idempotency-key', 'x-api-key', 'api-key', 'openai-organization', 'openai-project']);

/**
 * ... and by prefix: the official SDKs' platform and retry headers (x-stainless-os, -retry-count,
 * -timeout, -helper-method; new ones come with new SDK versions), Tollgate's own (X-Tollgate-Dry-Run,
 * X-Tollgate-Max-Tokens) and Anthropic's (anthropic-version, anthropic-beta,
 * anthropic-dangerous-direct-browser-access).
 */
const ALLOWED_HEADER_PREFIXES = ['x-stainless-', 'x-tollgate-', 'anthropic-'];

function isAllowedRequestHeader(name: string): boolean {
  return ALLOWED_HEADER_NAMES.has(name) || ALLOWED_HEADER_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/**
 * The headers of a preflight's Access-Control-Request-Headers that a page may send, in its order; the
 * others are dropped. Prefixes cannot be written in Access-Control-Allow-Headers, so the allowed names are
 * echoed: a request for only allowed headers is allowed as asked, and one naming any other header is
 * refused by the browser (that header is missing from the answer).
 */
export function allowedRequestHeaders(requested: string): string[] {
  return requested
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name.length > 0 && isAllowedRequestHeader(name));
}

/**
 * Registers CORS on `api` (the /v1 scope; /v1/account, whose PATCH a page may send too) when origins are
 * configured; call it before the auth hook.
 */
export async function registerCors(api: FastifyInstance, origins: readonly string[], methods: readonly string[] = ['GET', 'POST']): Promise<void> {
  if (origins.length === 0) return;
  const allowed = new Set(origins);
  // The plugin echoes a preflight's Access-Control-Request-Headers (and varies on it): narrowed first.
  api.addHook('onRequest', function narrowRequestedHeaders(request, _reply, done) {
    const requested = request.raw.headers['access-control-request-headers'];
    if (request.method === 'OPTIONS' && requested !== undefined) {
      const narrowed = allowedRequestHeaders(requested);
      if (narrowed.length > 0) request.raw.headers['access-control-request-headers'] = narrowed.join(', ');
      else delete request.raw.headers['access-control-request-headers'];
    }
    done();
  });
  await api.register(cors, {
    // A function, not the list: with a list the plugin still sends its other CORS headers to any origin.
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin) ? origin : false),
    methods: [...methods],
    // No allowedHeaders: the plugin then echoes the (narrowed) requested headers.
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  });
}
