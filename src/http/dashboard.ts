// Serves the dashboard (`npm run build` writes it to dist/dashboard/) at /dashboard/, from the gateway's
// own port, and /dashboard/config.json: what the page needs to know before anyone signs in (whether
// this gateway has an operator view). Its pages carry a strict Content-Security-Policy: scripts, styles
// and API calls from this origin only — no inline code, no third-party resources, no framing.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

const ROOT = fileURLToPath(new URL('../dashboard/', import.meta.url));

export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': DASHBOARD_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cache-control': 'no-cache',
};

export interface DashboardOptions {
  /** admin.token is set: the operator view exists. */
  readonly operator: boolean;
}

export async function registerDashboard(app: FastifyInstance, options: DashboardOptions): Promise<void> {
  // A source checkout that was never built has no dashboard; the API works without it.
  if (!existsSync(ROOT)) return;
  app.get('/dashboard', async function dashboardRoot(_request, reply) {
    return reply.redirect('/dashboard/');
  });
  const config = JSON.stringify({ operator: options.operator });
  app.get('/dashboard/config.json', async function dashboardConfig(_request, reply) {
    return reply.headers(SECURITY_HEADERS).type('application/json').send(config);
  });
  app.get('/dashboard/', async function dashboardPage(_request, reply) {
    return reply.sendFile('index.html');
  });
  await app.register(fastifyStatic, {
    root: ROOT,
    prefix: '/dashboard/',
    // The page itself is served by the route below: @fastify/static answers a directory URL with 404
    // when the browser accepts a pre-compressed form (preCompressed and index together).
    index: false,
    wildcard: false,
    cacheControl: false,
    // npm run build writes .br and .gz beside each file: the smallest the browser accepts is sent.
    preCompressed: true,
    setHeaders(res) {
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.header(name, value);
    },
  });
}
