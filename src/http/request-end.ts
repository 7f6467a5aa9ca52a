// Every request's end, in one place: a RequestTrace is attached when it arrives, and when it has ended
// (the response closed, and the bill too if one was opened) it is reported once — to the metrics (client
// API requests) and as one access-log line. The line carries ids, status, timing, tokens and money;
// the body only with `log.bodies: true`; never a header, so never a key.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config/types.js';
import type { Logger } from '../log.js';
import type { UsageEndpoint } from '../storage/types.js';
import type { Endpoint, GatewayMetrics } from '../telemetry/metrics.js';
import type { OutcomeRecorder } from '../telemetry/outcome-recorder.js';
import { outcomeRecord } from '../telemetry/request-outcome.js';
import { RequestTrace } from '../telemetry/request-trace.js';

declare module 'fastify' {
  interface FastifyRequest {
    trace: RequestTrace;
  }
}

/** The client API's routes, as endpoint labels (any other /v1 path: 'other'). */
const ENDPOINTS: ReadonlyMap<string, Endpoint> = new Map([
  ['/v1/chat/completions', 'chat_completions'],
  ['/v1/embeddings', 'embeddings'],
  ['/v1/models', 'models'],
  ['/v1/models/*', 'models'],
  ['/v1/key', 'key'],
  ['/v1/key/usage', 'key'],
  ['/v1/key/usage/summary', 'key'],
]);

/** The model calls, by route: each request to one with a valid key leaves a usage row, billed or not. */
const MODEL_CALLS: ReadonlyMap<string, UsageEndpoint> = new Map([
  ['/v1/chat/completions', 'chat'],
  ['/v1/embeddings', 'embeddings'],
]);

/** A path too long to be a route is cut in the log line. */
const MAX_LOGGED_PATH = 200;
/** A user agent is a client's to write: cut so that one cannot fill the log (browsers' are ~150 characters). */
const MAX_LOGGED_USER_AGENT = 256;

export function registerRequestEnd(app: FastifyInstance, config: Config, metrics: GatewayMetrics, log: Logger, outcomes: OutcomeRecorder): void {
  app.decorateRequest('trace', null as unknown as RequestTrace);
  app.addHook('onRequest', function traceRequest(request, reply, done) {
    // Read now: the socket (and so its address) may be gone by the time the request ends.
    const clientIp = request.ip;
    const trace = new RequestTrace(() => requestEnded(request, trace, clientIp));
    request.trace = trace;
    if (request.method === 'POST') trace.endpoint = MODEL_CALLS.get(request.routeOptions.url ?? '');
    const raw = reply.raw;
    // 'close', not Fastify's onResponse: a stream's reply is hijacked, and a client may leave mid-way.
    raw.once('close', () => trace.responseClosed(raw.statusCode, raw.writableFinished));
    done();
  });

  function requestEnded(request: FastifyRequest, trace: RequestTrace, clientIp: string | undefined): void {
    const path = request.url.split('?', 1)[0]!;
    const clientApi = path.startsWith('/v1/');
    const body = request.body as { model?: unknown } | undefined;
    const requestedModel = body !== null && typeof body === 'object' ? body.model : undefined;
    // CORS preflights are the browser's, not requests of the client API.
    if (clientApi && request.method !== 'OPTIONS') metrics.requestEnded(ENDPOINTS.get(request.routeOptions.url ?? '') ?? 'other', requestedModel, trace);
    recordOutcome(request, trace, requestedModel);
    const status = trace.clientStatus();
    // Probes, scrapes and dashboard files are logged at debug only: they would drown the requests (a
    // /ready polled during an outage would repeat it; the outage's own warn line says it once). A
    // request the gateway failed (5xx) is a warning; one the client got wrong (4xx) is not.
    const level = clientApi || path.startsWith('/admin/') ? (status >= 500 ? 'warn' : 'info') : 'debug';
    if (!log.isLevelEnabled(level)) return;
    const billed = trace.billed;
    const line: Record<string, unknown> = {
      requestId: request.id,
      method: request.method,
      path: request.routeOptions.url ?? path.slice(0, MAX_LOGGED_PATH),
      status,
      ms: Math.round(performance.now() - trace.startedAt),
      clientIp,
      userAgent: request.headers['user-agent']?.slice(0, MAX_LOGGED_USER_AGENT),
    };
    if (request.apiKey) line.keyId = request.apiKey.id;
    if (trace.errorCode) line.error = trace.errorCode;
    if (trace.rateLimited) line.limit = trace.rateLimited;
    if (billed) {
      addBilledFields(line, billed);
    } else if (typeof requestedModel === 'string' && config.models.has(requestedModel)) {
      line.model = requestedModel;
    }
    if (trace.firstTokenAt !== undefined) line.firstTokenMs = Math.round(trace.firstTokenAt - trace.startedAt);
    if (config.log.bodies) {
      if (body !== undefined) line.body = body;
      if (trace.answer !== undefined) line.answer = trace.answer;
    }
    log[level](line, 'request');
  }

  /**
   * A model call that moved no money still leaves its usage row (a settled one wrote its own with the
   * ledger); a request without a valid key is only counted, per minute — it names no key to file it under.
   */
  function recordOutcome(request: FastifyRequest, trace: RequestTrace, requestedModel: unknown): void {
    // A key revoked or expired after it was read (the hold's admission re-checks it) is no valid key either.
    if (trace.errorCode === 'invalid_api_key') {
      outcomes.countUnauthenticated();
    } else if (trace.endpoint !== undefined && request.apiKey && !trace.billed) {
      outcomes.record(outcomeRecord(trace, request.id, request.apiKey.id, requestedModel, trace.clientStatus()));
    }
  }
}

/** The billing fields of a request's access line (also used by bench/telemetry-micro.mjs, so it measures this). */
export function addBilledFields(line: Record<string, unknown>, billed: NonNullable<RequestTrace['billed']>): void {
  line.model = billed.model;
  line.provider = billed.provider;
  line.upstreamModel = billed.upstreamModel;
  line.inputTokens = billed.inputTokens;
  line.cachedInputTokens = billed.cachedInputTokens;
  line.outputTokens = billed.outputTokens;
  line.reasoningTokens = billed.reasoningTokens;
  line.cost = billed.cost;
  line.usageSource = billed.usageSource;
  line.attempts = billed.attempts.length;
}
