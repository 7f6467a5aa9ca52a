// Maps what went wrong upstream to the gateway's error registry (product.md §6). Upstream messages are
// passed on (they describe the request), but never the gateway's own credentials.
import type { ProviderConfig } from '../config/types.js';
import { GatewayError, isGatewayError } from '../errors.js';
import { UpstreamFailureError, type UpstreamFailure } from '../providers/types.js';
import { SseOverflowError } from '../providers/framing/sse.js';
import { TransportError } from '../upstream/transport.js';

const KEEPS_STATUS = new Set([400, 404, 413, 422]);

function redact(message: string, provider: ProviderConfig): string {
  return provider.apiKey.length >= 8 ? message.split(provider.apiKey).join('[redacted]') : message;
}

/**
 * A native cell's upstream 4xx, answered as it came — status and body (product.md §14: clients recover by
 * the upstream's own wording). Not 401/403 (the gateway's credentials), 402 (the gateway's account), 408
 * or 429 (the upstream's limits, retried or failed over): those keep their mapping. Undefined otherwise,
 * and for a body that is not a JSON object (a proxy's page is no answer in the client's API).
 */
export function verbatimUpstreamError(failure: UpstreamFailure, provider: ProviderConfig): GatewayError | undefined {
  const { status, body } = failure;
  if (body === undefined || status < 400 || status >= 500 || [401, 402, 403, 408, 429].includes(status)) return undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  } catch {
    return undefined;
  }
  return new GatewayError('upstream_rejected', {
    status,
    message: redact(failure.message, provider),
    type: failure.type ?? 'invalid_request_error',
    wireCode: failure.code ?? 'upstream_error',
    param: failure.param ?? null,
    upstreamBody: redact(body, provider),
  });
}

export function failureToGatewayError(failure: UpstreamFailure, provider: ProviderConfig): GatewayError {
  const verbatim = verbatimUpstreamError(failure, provider);
  if (verbatim) return verbatim;
  const message = redact(failure.message, provider);
  if (KEEPS_STATUS.has(failure.status)) {
    return new GatewayError('upstream_rejected', {
      status: failure.status,
      message,
      type: failure.type ?? 'invalid_request_error',
      wireCode: failure.code ?? 'upstream_error',
      param: failure.param ?? null,
    });
  }
  if (failure.status === 401 || failure.status === 403) {
    // Never a 401: that would tell the client its own Tollgate key is bad.
    return new GatewayError('upstream_auth_failed', {
      message: `The upstream provider refused the gateway's credentials (HTTP ${failure.status}).`,
    });
  }
  if (failure.status === 429) {
    return new GatewayError('upstream_rate_limited', {
      message,
      ...(failure.retryAfter ? { headers: { 'retry-after': failure.retryAfter } } : {}),
    });
  }
  if (failure.status === 408 || failure.status === 504) return new GatewayError('upstream_timeout', { message });
  return new GatewayError('upstream_error', { message, ...(failure.type ? { type: failure.type } : {}) });
}

/** Any error from an upstream attempt → the registry. */
export function toGatewayError(error: unknown, provider: ProviderConfig): GatewayError {
  if (isGatewayError(error)) return error;
  if (error instanceof UpstreamFailureError) return failureToGatewayError(error.failure, provider);
  if (error instanceof TransportError) {
    if (error.reason === 'timeout') return new GatewayError('upstream_timeout', { message: `The upstream timed out: ${error.message}.` });
    return new GatewayError('upstream_error', { message: `The upstream failed: ${error.message}.` });
  }
  if (error instanceof SseOverflowError) return new GatewayError('upstream_error', { message: 'The upstream sent a malformed stream.' });
  return new GatewayError('internal_error', { cause: error });
}

/** A stream that ended without its end marker or a finish reason, and without an error: the connection broke. */
export function incompleteStreamError(): GatewayError {
  return new GatewayError('upstream_error', { message: 'The upstream failed: the upstream stream ended before it completed.' });
}

/** The status recorded for one attempt: the upstream's HTTP status, else what the gateway made of it. */
export function attemptStatusOf(error: unknown): number {
  if (error instanceof UpstreamFailureError && error.failure.status > 0) return error.failure.status;
  if (error instanceof TransportError && error.reason === 'timeout') return 504;
  if (error instanceof TransportError && error.reason === 'aborted') return 499;
  return 502;
}
