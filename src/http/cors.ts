// CORS for the client API (product.md §10, server.cors_origins): a browser app on a listed origin may
// call /v1 with its key. Preflights from those origins are answered before key auth (a preflight never
// carries the Authorization header); any other origin gets no CORS header at all, so its browser
// refuses to hand the answer to the page.
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/** Headers a browser app needs to read: the request id, rate-limit state and when to retry. */
const EXPOSED_HEADERS = [
  'x-request-id',
  'retry-after',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-tokens',
];

/** Registers CORS on `api` (the /v1 scope) when origins are configured; call it before the auth hook. */
export async function registerCors(api: FastifyInstance, origins: readonly string[]): Promise<void> {
  if (origins.length === 0) return;
  const allowed = new Set(origins);
  await api.register(cors, {
    // A function, not the list: with a list the plugin still sends its other CORS headers to any origin.
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin) ? origin : false),
    methods: ['GET', 'POST'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  });
}
