// The outcome fields of a usage row (client API, agent session, error, latency, time to first token),
// read from a request's trace — the same for a row written with a settlement and for one written without money.
import type { LimitName } from '../limits/rate-limiter.js';
import type { UsageEndpoint, UsageRecord } from '../storage/types.js';

/** The error code of a row whose client went away before its answer was complete (it got no error). */
export const CLIENT_GONE_CODE = 'client_disconnected';

/** Error messages are the gateway's own (an upstream's is relayed in one); a runaway one is cut. */
const MAX_ERROR_MESSAGE = 1_000;
/** A model id the client named that the config does not know: kept for the operator, cut to a sane size. */
const MAX_REQUESTED_MODEL = 200;

type OutcomeFields = Pick<UsageRecord, 'endpoint' | 'sessionId' | 'errorCode' | 'errorMessage' | 'durationMs' | 'firstTokenMs'>;

/**
 * The client API endpoints, as metrics labels (any other /v1 path: 'other'). Never the session id: a
 * label's values must be bounded, and a client names as many sessions as it likes.
 */
export type Endpoint = 'chat_completions' | 'embeddings' | 'messages' | 'responses' | 'models' | 'key' | 'account' | 'other';

/** A request's client API, agent session (http/session-id.ts) and arrival (performance.now()). */
export interface RequestTiming {
  readonly endpoint: UsageEndpoint | undefined;
  readonly sessionId: string | null;
  readonly startedAt: number;
}

/** An error as a row records it: the registry's code and the message the client read. */
export interface RowError {
  readonly code: string;
  readonly message: string;
}

export function outcomeFields(timing: RequestTiming, status: number, failure: RowError | undefined, firstTokenAt: number | undefined): OutcomeFields {
  const error = failure ?? (status === 499 ? { code: CLIENT_GONE_CODE, message: 'The client disconnected before its answer was complete.' } : undefined);
  return {
    endpoint: timing.endpoint ?? null,
    sessionId: timing.sessionId,
    errorCode: error?.code ?? null,
    errorMessage: error ? error.message.slice(0, MAX_ERROR_MESSAGE) : null,
    durationMs: Math.round(performance.now() - timing.startedAt),
    firstTokenMs: firstTokenAt === undefined ? null : Math.round(firstTokenAt - timing.startedAt),
  };
}

/**
 * The usage row of a request that moved no money — refused (400, 402, 404, 409, 413, 415, 429, 503...),
 * quoted (a dry run), replayed (Idempotency-Key) or gone before any hold: no tokens, cost 0, no ledger entry.
 */
export function outcomeRecord(timing: RequestTiming, requestId: string, keyId: string, requestedModel: unknown, status: number, failure: RowError | undefined): UsageRecord {
  return {
    requestId,
    time: Date.now(),
    keyId,
    model: typeof requestedModel === 'string' && requestedModel !== '' ? requestedModel.slice(0, MAX_REQUESTED_MODEL) : null,
    provider: null,
    upstreamModel: null,
    status,
    inputTokens: 0,
    cachedInputTokens: 0,
    outputTokens: 0,
    reasoningTokens: 0,
    cacheWriteTokens: 0,
    cost: 0,
    usageSource: 'none',
    attempts: [],
    ...outcomeFields(timing, status, failure, undefined),
  };
}

/**
 * One request, once it has ended: built once, frozen, and read by the metrics, the access log and the
 * usage row of a request that moved no money. `status` is what the client got: 499 when it left before
 * its answer was complete, else the billed row's status when one was written (a stream that failed
 * midway went out as a 200), else the response's.
 */
export interface RequestOutcome {
  readonly requestId: string;
  readonly method: string;
  /** The matched route, else the path (cut). */
  readonly path: string;
  /** The client API's metrics label, for a /v1 request; undefined elsewhere. */
  readonly metricsLabel: Endpoint | undefined;
  /** The usage row's endpoint, for a model call; undefined for every other route. */
  readonly endpoint: UsageEndpoint | undefined;
  /** The agent session the client named (http/session-id.ts); null: none. */
  readonly sessionId: string | null;
  readonly keyId: string | undefined;
  /** The `model` of the body, as sent (anything, or undefined). */
  readonly requestedModel: unknown;
  readonly status: number;
  readonly startedAt: number;
  readonly durationMs: number;
  readonly firstTokenAt: number | undefined;
  readonly billed: UsageRecord | undefined;
  readonly error: RowError | undefined;
  /** The limit that refused it (429 rate_limited). */
  readonly rateLimited: LimitName | undefined;
  readonly clientIp: string | undefined;
  readonly userAgent: string | undefined;
}
