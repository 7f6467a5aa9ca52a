// Reads Google API errors ({"error":{code, message, status, details}}) from HTTP bodies and stream events.
import { isJsonObject } from '../../json-object.js';
import { unrecognisedFailure, type UpstreamFailure } from '../types.js';

const MAX_MESSAGE_CHARS = 2_000;
const RETRY_INFO = 'type.googleapis.com/google.rpc.RetryInfo';

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value.slice(0, MAX_MESSAGE_CHARS) : undefined;
}

/** RetryInfo's `retryDelay` (a protobuf Duration, '34.4s') as whole seconds, rounded up: '35'. */
function retryDelayOf(details: unknown): string | undefined {
  if (!Array.isArray(details)) return undefined;
  for (const detail of details) {
    if (!isJsonObject(detail) || detail['@type'] !== RETRY_INFO || typeof detail.retryDelay !== 'string') continue;
    const match = /^(\d+(?:\.\d+)?)s$/.exec(detail.retryDelay);
    if (match) return String(Math.ceil(Number(match[1])));
  }
  return undefined;
}

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
const CREDENTIAL_REASONS = new Set(['API_KEY_INVALID', 'API_KEY_EXPIRED', 'API_KEY_SERVICE_BLOCKED']);

/** Google answers a bad API key with 400 INVALID_ARGUMENT; only ErrorInfo's reason says it is the key. */
function refusesCredentials(details: unknown): boolean {
  if (!Array.isArray(details)) return false;
  return details.some((d) => isJsonObject(d) && d['@type'] === ERROR_INFO && typeof d.reason === 'string' && CREDENTIAL_REASONS.has(d.reason));
}

/**
 * An `error` member. `status` is the HTTP status; for an event inside a 200 stream it is the error's own
 * `code` (the HTTP status Google would have answered with), or 0 when there is none.
 */
export function readGeminiErrorObject(error: unknown, status: number | undefined, retryAfter?: string): UpstreamFailure {
  const fields = isJsonObject(error) ? error : {};
  const code = typeof fields.code === 'number' && Number.isInteger(fields.code) && fields.code >= 100 && fields.code <= 599 ? fields.code : 0;
  // Reported as 401 so the gateway answers upstream_auth_failed (its own credentials), never a 400
  // that would tell the client its request was wrong.
  const httpStatus = refusesCredentials(fields.details) ? 401 : (status ?? code);
  const grpcStatus = text(fields.status);
  return {
    status: httpStatus,
    message: text(fields.message) ?? text(error) ?? `upstream error (HTTP ${httpStatus})`,
    type: grpcStatus,
    code: grpcStatus,
    param: undefined,
    retryAfter: retryAfter ?? retryDelayOf(fields.details),
  };
}

export function parseGeminiError(status: number, bodyText: string, headers: Record<string, string | string[] | undefined>): UpstreamFailure {
  const header = headers['retry-after'];
  const retryAfter = (Array.isArray(header) ? header[0] : header) || undefined;
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    body = undefined;
  }
  // streamGenerateContent without alt=sse answers errors as a one-element array.
  if (Array.isArray(body)) body = body[0];
  if (isJsonObject(body) && body.error !== undefined) return readGeminiErrorObject(body.error, status, retryAfter);
  return unrecognisedFailure(status, bodyText, retryAfter);
}
