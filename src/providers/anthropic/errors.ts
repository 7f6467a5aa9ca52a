// Reads Anthropic error bodies and stream error events: {"type":"error","error":{"type","message"}}.
import { isJsonObject } from '../../json-object.js';
import { parseOpenAIError } from '../openai/errors.js';
import type { UpstreamFailure } from '../types.js';

const MAX_MESSAGE_CHARS = 2_000;

/** The HTTP status Anthropic documents for each error type; an error event inside a 200 stream has only
 * the type, and the status decides how the gateway reports it (retryable, kept 4xx, auth failure). */
const STATUS_BY_TYPE: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value.slice(0, MAX_MESSAGE_CHARS) : undefined;
}

export function statusForErrorType(type: unknown): number {
  return (typeof type === 'string' ? STATUS_BY_TYPE[type] : undefined) ?? 500;
}

/** The `error` member of an error body or event. */
export function readAnthropicErrorObject(error: Record<string, unknown>, status: number, retryAfter?: string): UpstreamFailure {
  const type = text(error.type);
  return {
    status,
    message: text(error.message) ?? `upstream error (HTTP ${status})`,
    type,
    code: type,
    param: undefined,
    retryAfter,
  };
}

export function parseAnthropicError(
  status: number,
  bodyText: string,
  headers: Record<string, string | string[] | undefined>,
): UpstreamFailure {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    body = undefined;
  }
  if (isJsonObject(body) && isJsonObject(body.error)) {
    const header = headers['retry-after'];
    return readAnthropicErrorObject(body.error, status, Array.isArray(header) ? header[0] : header);
  }
  // Not Anthropic's shape (a proxy's HTML page, an empty body): read it as the OpenAI adapter does.
  return parseOpenAIError(status, bodyText, headers);
}

