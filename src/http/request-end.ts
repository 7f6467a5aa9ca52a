// Every request's end, in one place: when its response has closed — and, for a model call, its flow has
// settled (a client that leaves mid-stream closes the response before its money settles) — one frozen
// RequestOutcome is built and reported once: to the metrics (client API requests), as the usage row of
// a model call that moved no money (a refusal, a quote, a replay), as the per-minute count of a request
// without a valid key, and as one access-log line. The line carries ids, status, timing, tokens and
// money; the body only with `log.bodies: true`; never a header, so never a key.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config/types.js';
import type { GatewayError } from '../errors.js';
import type { LimitName } from '../limits/rate-limiter.js';
import type { Logger } from '../log.js';
import type { FlowReport, FlowResult } from '../pipeline/flow.js';
import type { UsageEndpoint, UsageRecord } from '../storage/types.js';
import type { GatewayMetrics } from '../telemetry/metrics.js';
import type { OutcomeRecorder } from '../telemetry/outcome-recorder.js';
import { outcomeRecord, type Endpoint, type RequestOutcome } from '../telemetry/request-outcome.js';
import type { ClientApiRoutes } from './deps.js';
import { sessionIdOf } from './session-id.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** performance.now() when it arrived. */
    receivedAt: number;
    /** A model call's flow, once its handler started it: the end waits for it to settle. */
    flow: Promise<FlowResult> | undefined;
    /** The error it was answered with (rendered by an error handler). */
    answeredError: GatewayError | undefined;
  }
}

/** The routes of the key holder's own state and the account token holder's, as metrics labels; a client API's come with it. */
const STATE_ROUTES: ReadonlyArray<readonly [string, Endpoint]> = [
  ['/v1/models', 'models'],
  ['/v1/models/*', 'models'],
  ['/v1/key', 'key'],
  ['/v1/key/usage', 'key'],
  ['/v1/key/usage/summary', 'key'],
  ['/v1/account', 'account'],
  ['/v1/account/', 'account'],
  ['/v1/account/usage', 'account'],
  ['/v1/account/usage/summary', 'account'],
  ['/v1/account/keys', 'account'],
  ['/v1/account/keys/:id', 'account'],
  ['/v1/account/keys/:id/revoke', 'account'],
  ['/v1/account/checkout', 'account'],
];

/** A path too long to be a route is cut in the log line. */
const MAX_LOGGED_PATH = 200;
/** A user agent is a client's to write: cut so that one cannot fill the log (browsers' are ~150 characters). */
const MAX_LOGGED_USER_AGENT = 256;

export function registerRequestEnd(
  app: FastifyInstance,
  config: Config,
  metrics: GatewayMetrics,
  log: Logger,
  outcomes: OutcomeRecorder,
  apis: readonly ClientApiRoutes[],
): void {
  const labels = new Map<string, Endpoint>(STATE_ROUTES);
  const modelCalls = new Map<string, UsageEndpoint>();
  for (const api of apis) {
    labels.set(`/v1${api.path}`, api.metricsLabel);
    modelCalls.set(`/v1${api.path}`, api.endpoint);
  }
  app.decorateRequest('receivedAt', 0);
  app.decorateRequest('flow', undefined);
  app.decorateRequest('answeredError', undefined);
  app.addHook('onRequest', function watchRequestEnd(request, reply, done) {
    request.receivedAt = performance.now();
    // Read now: the socket (and so its address) may be gone by the time the request ends.
    const clientIp = request.ip;
    const raw = reply.raw;
    // 'close', not Fastify's onResponse: a stream's reply is hijacked, and a client may leave mid-way.
    raw.once('close', () => {
      const wire = { status: raw.statusCode, completed: raw.writableFinished, clientIp };
      const flow = request.flow;
      if (!flow) return requestEnded(request, wire, undefined);
      flow.then(
        (result) => requestEnded(request, wire, result.report),
        () => requestEnded(request, wire, undefined),
      );
    });
    done();
  });

  function requestEnded(request: FastifyRequest, wire: { status: number; completed: boolean; clientIp: string | undefined }, report: FlowReport | undefined): void {
    const outcome = outcomeOf(request, wire, report);
    // CORS preflights are the browser's, not requests of the client API.
    if (outcome.metricsLabel !== undefined && request.method !== 'OPTIONS') metrics.requestEnded(outcome);
    recordOutcome(outcome);
    logLine(request, outcome, report);
  }

  function outcomeOf(request: FastifyRequest, wire: { status: number; completed: boolean; clientIp: string | undefined }, report: FlowReport | undefined): RequestOutcome {
    const path = request.url.split('?', 1)[0]!;
    const route = request.routeOptions.url;
    const body = request.body as { model?: unknown } | undefined;
    const billed: UsageRecord | undefined = report?.billed;
    const error = request.answeredError;
    const limit = error?.code === 'rate_limited' ? (error.metadata?.limit as LimitName | undefined) : undefined;
    return Object.freeze({
      requestId: request.id,
      method: request.method,
      path: route ?? path.slice(0, MAX_LOGGED_PATH),
      metricsLabel: path.startsWith('/v1/') ? (labels.get(route ?? '') ?? 'other') : undefined,
      endpoint: request.method === 'POST' ? modelCalls.get(route ?? '') : undefined,
      sessionId: sessionIdOf(request.headers),
      keyId: request.apiKey?.id,
      requestedModel: body !== null && typeof body === 'object' ? body.model : undefined,
      // A client that left before its answer was complete got nothing; a billed row's status says more than
      // the wire's (a stream that failed midway went out as a 200).
      status: !wire.completed ? 499 : billed ? billed.status : wire.status,
      startedAt: request.receivedAt,
      durationMs: performance.now() - request.receivedAt,
      firstTokenAt: report?.firstTokenAt,
      billed,
      error: error ? { code: error.code, message: error.message } : undefined,
      rateLimited: limit,
      clientIp: wire.clientIp,
      userAgent: request.headers['user-agent']?.slice(0, MAX_LOGGED_USER_AGENT),
    });
  }

  /**
   * A model call that moved no money still leaves its usage row (a billed one wrote its own with the
   * ledger); a request without a valid key is only counted, per minute — it names no key to file it under.
   */
  function recordOutcome(outcome: RequestOutcome): void {
    // A key revoked or expired after it was read (the hold's admission re-checks it) is no valid key either.
    if (outcome.error?.code === 'invalid_api_key') {
      outcomes.countUnauthenticated();
    } else if (outcome.endpoint !== undefined && outcome.keyId !== undefined && !outcome.billed) {
      outcomes.record(outcomeRecord(outcome, outcome.requestId, outcome.keyId, outcome.requestedModel, outcome.status, outcome.error));
    }
  }

  function logLine(request: FastifyRequest, outcome: RequestOutcome, report: FlowReport | undefined): void {
    // Probes, scrapes and dashboard files are logged at debug only: they would drown the requests (a
    // /ready polled during an outage would repeat it; the outage's own warn line says it once). A
    // request the gateway failed (5xx) is a warning; one the client got wrong (4xx) is not.
    const logged = outcome.metricsLabel !== undefined || outcome.path.startsWith('/admin/') || outcome.path.startsWith('/webhooks/');
    const level = logged ? (outcome.status >= 500 ? 'warn' : 'info') : 'debug';
    if (!log.isLevelEnabled(level)) return;
    const line: Record<string, unknown> = {
      requestId: outcome.requestId,
      method: outcome.method,
      path: outcome.path,
      status: outcome.status,
      ms: Math.round(outcome.durationMs),
      clientIp: outcome.clientIp,
      userAgent: outcome.userAgent,
    };
    if (outcome.keyId) line.keyId = outcome.keyId;
    // An account token's request (/v1/account) names its account instead.
    if (request.account) line.accountId = request.account.id;
    if (outcome.error) line.error = outcome.error.code;
    if (outcome.rateLimited) line.limit = outcome.rateLimited;
    if (outcome.billed) addBilledFields(line, outcome.billed);
    else if (typeof outcome.requestedModel === 'string' && config.models.has(outcome.requestedModel)) line.model = outcome.requestedModel;
    if (outcome.firstTokenAt !== undefined) line.firstTokenMs = Math.round(outcome.firstTokenAt - outcome.startedAt);
    if (config.log.bodies) {
      if (request.body !== undefined) line.body = request.body;
      if (report?.answer !== undefined) line.answer = report.answer;
    }
    log[level](line, 'request');
  }
}

/** The billing fields of a request's access line (also used by bench/telemetry-micro.mjs, so it measures this). */
export function addBilledFields(line: Record<string, unknown>, billed: UsageRecord): void {
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
