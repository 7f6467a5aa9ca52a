// The outcome fields of a usage row (client API, error, latency, time to first token), read from a
// request's trace — the same for a row written with a settlement and for one written without money.
import type { UsageRecord } from '../storage/types.js';
import type { RequestTrace } from './request-trace.js';

/** The error code of a row whose client went away before its answer was complete (it got no error). */
export const CLIENT_GONE_CODE = 'client_disconnected';

/** Error messages are the gateway's own (an upstream's is relayed in one); a runaway one is cut. */
const MAX_ERROR_MESSAGE = 1_000;
/** A model id the client named that the config does not know: kept for the operator, cut to a sane size. */
const MAX_REQUESTED_MODEL = 200;

type OutcomeFields = Pick<UsageRecord, 'endpoint' | 'errorCode' | 'errorMessage' | 'durationMs' | 'firstTokenMs'>;

export function outcomeFields(trace: RequestTrace, status: number, failure: { readonly code: string; readonly message: string } | undefined): OutcomeFields {
  const error = failure ?? (status === 499 ? { code: CLIENT_GONE_CODE, message: 'The client disconnected before its answer was complete.' } : undefined);
  return {
    endpoint: trace.endpoint ?? null,
    errorCode: error?.code ?? null,
    errorMessage: error ? error.message.slice(0, MAX_ERROR_MESSAGE) : null,
    durationMs: Math.round(performance.now() - trace.startedAt),
    firstTokenMs: trace.firstTokenAt === undefined ? null : Math.round(trace.firstTokenAt - trace.startedAt),
  };
}

/**
 * The usage row of a request that moved no money — refused (400, 402, 404, 409, 413, 415, 429, 503...),
 * quoted (a dry run), replayed (Idempotency-Key) or gone before any hold: no tokens, cost 0, no ledger entry.
 */
export function outcomeRecord(trace: RequestTrace, requestId: string, keyId: string, requestedModel: unknown, status: number): UsageRecord {
  const failure = trace.errorCode !== undefined ? { code: trace.errorCode, message: trace.errorMessage ?? '' } : undefined;
  return {
    requestId,
    time: Date.now(),
    keyId,
    model: typeof requestedModel === 'string' && requestedModel !== '' ? requestedModel.slice(0, MAX_REQUESTED_MODEL) : null,
    provider: trace.provider ?? null,
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
    ...outcomeFields(trace, status, failure),
  };
}
