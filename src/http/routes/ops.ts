// GET /metrics (Prometheus text, optionally behind metrics.token) and GET /ready (the database answers
// and the gateway is not shutting down), beside /health (the process is up). product.md §10.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import type { StoreProbe } from '../../storage/types.js';
import type { GatewayMetrics } from '../../telemetry/metrics.js';
import { checkReadiness } from '../../telemetry/readiness.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Constant-time: both sides are hashed to the same length first, so not even the length leaks. */
function tokenMatches(expected: Buffer, authorization: string | undefined): boolean {
  const sent = authorization ? BEARER.exec(authorization)?.[1] : undefined;
  return sent !== undefined && timingSafeEqual(expected, digest(sent));
}

export function registerOpsRoutes(app: FastifyInstance, config: Config, metrics: GatewayMetrics, probe: StoreProbe, isClosing: () => boolean): void {
  const token = config.metrics.token === undefined ? undefined : digest(config.metrics.token);
  app.get('/metrics', async function scrape(request, reply) {
    if (token && !tokenMatches(token, request.headers.authorization)) {
      throw new GatewayError('invalid_metrics_token', { headers: { 'www-authenticate': 'Bearer realm="tollgate-metrics"' } });
    }
    const text = await metrics.exposition();
    return reply.type(metrics.contentType).header('cache-control', 'no-store').send(text);
  });

  app.get('/ready', async function ready(_request, reply) {
    const readiness = await checkReadiness(probe, isClosing);
    const body = readiness.ready ? { status: 'ready' } : { status: 'not_ready', reason: readiness.reason };
    return reply
      .code(readiness.ready ? 200 : 503)
      .type('application/json')
      .header('cache-control', 'no-store')
      .send(JSON.stringify(body));
  });
}
