// Reads OpenAI-style error bodies: {"error":{message,type,code,param}}, plus the variants that
// OpenAI-compatible servers send ({"error":"text"}, vLLM's {"object":"error","message":...}, FastAPI's {"detail":...}).
import { isJsonObject } from '../../json-object.js';
import { unrecognisedFailure, type UpstreamFailure } from '../types.js';

const MAX_MESSAGE_CHARS = 2_000;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value.slice(0, MAX_MESSAGE_CHARS) : undefined;
}

/** An `error` member, as found in a body or in a stream event. */
export function readOpenAIErrorObject(error: unknown, status: number, retryAfter?: string): UpstreamFailure {
  if (isJsonObject(error)) {
    return {
      status,
      message: text(error.message) ?? `upstream error (HTTP ${status})`,
      type: text(error.type),
      code: text(error.code),
      param: text(error.param),
      retryAfter,
    };
  }
  return { status, message: text(error) ?? `upstream error (HTTP ${status})`, type: undefined, code: undefined, param: undefined, retryAfter };
}

export function parseOpenAIError(
  status: number,
  bodyText: string,
  headers: Record<string, string | string[] | undefined>,
): UpstreamFailure {
  const retryAfterHeader = headers['retry-after'];
  const retryAfter = Array.isArray(retryAfterHeader) ? retryAfterHeader[0] : retryAfterHeader;
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    body = undefined;
  }
  if (isJsonObject(body)) {
    if (body.error !== undefined) return readOpenAIErrorObject(body.error, status, retryAfter);
    const message = text(body.message) ?? text(typeof body.detail === 'string' ? body.detail : undefined);
    if (message) return { status, message, type: text(body.type), code: text(body.code), param: text(body.param), retryAfter };
  }
  return unrecognisedFailure(status, bodyText, retryAfter);
}
