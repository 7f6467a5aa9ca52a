// Errors in the Messages envelope, with the statuses and headers of product.md §14's table:
// {"type":"error","error":{"type","message"},"request_id"}. Claude Code retries 429 and 5xx (and even 401)
// for minutes unless told not to, so a refusal that waiting cannot cure — the balance, the budget — says
// `x-should-retry: false`. A native cell's upstream error reaches the client as the upstream sent it.
import type { GatewayError } from '../../errors.js';
import { isJsonObject, type JsonObject } from '../../json-object.js';
import { ErrorAnswer } from '../../http/render-error.js';

const NO_RETRY = { 'x-should-retry': 'false' };

/** The error types of the Messages API; an upstream's error of another API (a translated cell's) is mapped by its status. */
const MESSAGES_ERROR_TYPES = new Set(['invalid_request_error', 'authentication_error', 'billing_error', 'permission_error', 'not_found_error', 'request_too_large', 'rate_limit_error', 'timeout_error', 'api_error', 'overloaded_error']);

/** An upstream's refusal (400, 404, 413, 422) as a Messages error type: its own when it is one, else by its status. */
function rejectedType(error: GatewayError): string {
  if (MESSAGES_ERROR_TYPES.has(error.type)) return error.type;
  if (error.status === 404) return 'not_found_error';
  return error.status === 413 ? 'request_too_large' : 'invalid_request_error';
}

/** The Messages error type of each registry code the Messages API answers with. */
function errorType(error: GatewayError): string {
  switch (error.code) {
    case 'invalid_api_key':
      return 'authentication_error';
    case 'insufficient_balance':
    case 'credit_limit_reached':
    case 'account_suspended':
    case 'budget_exceeded':
      return 'billing_error';
    case 'rate_limited':
    case 'upstream_rate_limited':
      return 'rate_limit_error';
    case 'model_not_found':
    case 'not_found':
    case 'key_not_found':
      return 'not_found_error';
    case 'request_too_large':
      return 'request_too_large';
    case 'upstream_timeout':
      return 'timeout_error';
    case 'upstream_error':
      return error.status === 529 ? 'overloaded_error' : 'api_error';
    case 'upstream_rejected':
      return rejectedType(error);
    default:
      return error.status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/** The `error` member: type and message, and the gateway's figures (a 402's hold, available, affordable_max_tokens). */
function errorMember(error: GatewayError): JsonObject {
  const member: JsonObject = { type: errorType(error), message: error.message };
  if (error.metadata) member.metadata = error.metadata as JsonObject;
  return member;
}

/** The Messages error body. */
export function messagesErrorBody(error: GatewayError, requestId: string): JsonObject {
  return { type: 'error', error: errorMember(error), request_id: requestId };
}

/** The upstream's own answer, when it is one in the Messages shape (a proxy's HTML page is not passed on). */
export function verbatimBody(error: GatewayError): string | undefined {
  const text = error.upstreamBody;
  if (text === undefined) return undefined;
  try {
    const body: unknown = JSON.parse(text);
    return isJsonObject(body) && body.type === 'error' && isJsonObject(body.error) ? text : undefined;
  } catch {
    return undefined;
  }
}

/** Whole seconds until `resetsAt` (an ISO time), at least 1. */
function secondsUntil(resetsAt: unknown, now: number): number {
  const at = typeof resetsAt === 'string' ? Date.parse(resetsAt) : NaN;
  return Number.isFinite(at) ? Math.max(1, Math.ceil((at - now) / 1000)) : 1;
}

/** An error answer of POST /v1/messages (and count_tokens). */
export function messagesEnvelope(error: GatewayError, requestId: string, now = Date.now()): ErrorAnswer {
  const verbatim = verbatimBody(error);
  if (verbatim !== undefined) return new ErrorAnswer(error.status, verbatim);
  const body = messagesErrorBody(error, requestId);
  switch (error.code) {
    case 'insufficient_balance':
    case 'credit_limit_reached':
    case 'account_suspended':
      return new ErrorAnswer(402, body, NO_RETRY);
    case 'budget_exceeded': {
      // A budget is a limit in time: 429 with the wait until its period resets, and no retries before it.
      const retryAfter = String(secondsUntil(error.metadata?.resets_at, now));
      return new ErrorAnswer(429, body, { ...NO_RETRY, 'retry-after': retryAfter });
    }
    default:
      return new ErrorAnswer(error.status, body);
  }
}
