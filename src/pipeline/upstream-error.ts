// Maps what went wrong upstream to the gateway's error registry (product.md §6). Upstream messages are
// passed on (they describe the request), but never the gateway's own credentials.
import type { ProviderConfig } from '../config/types.js';
import { GatewayError, isGatewayError } from '../errors.js';
import { UpstreamFailureError, type UpstreamFailure } from '../providers/types.js';
import { SseOverflowError } from '../providers/framing/sse.js';
import { TransportError } from '../upstream/transport.js';

const KEEPS_STATUS = new Set([400, 404, 413, 422]);
/**
 * A native cell's client speaks the upstream's API, so every 4xx the upstream answers reaches it as sent
 * (status and body: Claude Code recovers from a 400 by matching its wording) — except these, which speak
 * of the gateway's own account or are retried and reported by the gateway.
 */
const NATIVE_OWN_STATUS = new Set([401, 402, 403, 408, 429]);
/** Anthropic's "overloaded": a native Messages client gets it as such (its SDK has a class for it). */
const OVERLOADED = 529;

function redact(message: string, provider: ProviderConfig): string {
  return provider.apiKey.length >= 8 ? message.split(provider.apiKey).join('[redacted]') : message;
}

function keepsStatus(failure: UpstreamFailure, native: boolean): boolean {
  if (KEEPS_STATUS.has(failure.status)) return true;
  return native && failure.status >= 400 && failure.status < 500 && !NATIVE_OWN_STATUS.has(failure.status);
}

export function failureToGatewayError(failure: UpstreamFailure, provider: ProviderConfig): GatewayError {
  const message = redact(failure.message, provider);
  // Set only for a native cell (call-upstream.ts): the answer in the client's own API.
  const upstreamBody = failure.body === undefined ? undefined : redact(failure.body, provider);
  const native = upstreamBody !== undefined;
  if (keepsStatus(failure, native)) {
    return new GatewayError('upstream_rejected', {
      status: failure.status,
      message,
      type: failure.type ?? 'invalid_request_error',
      wireCode: failure.code ?? 'upstream_error',
      param: failure.param ?? null,
      ...(native ? { upstreamBody } : {}),
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
  return new GatewayError('upstream_error', {
    message,
    ...(failure.type ? { type: failure.type } : {}),
    // A 402 (the gateway's own upstream account) is the gateway's failure, never passed on.
    ...(native && failure.status !== 402 ? { upstreamBody, ...(failure.status === OVERLOADED ? { status: OVERLOADED } : {}) } : {}),
  });
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
