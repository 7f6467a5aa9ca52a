// The one place errors become HTTP responses: the convention's envelope, never a stack trace.
import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { GatewayError, isGatewayError } from '../errors.js';
import type { ServerDeps } from './deps.js';
import { addRateLimitHeaders } from './rate-limit-headers.js';
import { drainRefusedBody } from './refused-body.js';

/** Fastify's own errors (body parsing, limits) → the registry. */
function fromFastifyError(error: FastifyError): GatewayError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError('request_too_large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError('unsupported_media_type');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError('invalid_request', { message: 'The request body is empty; send a JSON object.' });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new GatewayError('invalid_request', { message: 'The request body is not valid JSON.' });
    default:
      break;
  }
  if (error.statusCode === 413) return new GatewayError('request_too_large');
  if (error.statusCode === 415) return new GatewayError('unsupported_media_type');
  if (error instanceof SyntaxError || error.statusCode === 400) {
    return new GatewayError('invalid_request', { message: 'The request body is not valid JSON.' });
  }
  return undefined;
}

export function toResponseError(error: unknown, log: Logger, requestId: string): GatewayError {
  if (isGatewayError(error)) {
    if (error.status >= 500 && error.code === 'internal_error') log.error({ err: error.cause ?? error, requestId }, 'internal error');
    return error;
  }
  const mapped = fromFastifyError(error as FastifyError);
  if (mapped) return mapped;
  log.error({ err: error, requestId }, 'unhandled error');
  return new GatewayError('internal_error');
}

/**
 * What a client API's envelope may return instead of a plain body, when its API answers an error with
 * another status or headers of its own (Anthropic's 429 for a budget, `x-should-retry`). A string body is
 * sent as it is: an upstream's own error answer, passed to a client that speaks its API.
 */
export class ErrorAnswer {
  constructor(
    readonly status: number,
    readonly body: string | object,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}
}

/** The answer to an error: its status and headers, and `body` (the error in the API's envelope, or an ErrorAnswer). */
export function sendError(reply: FastifyReply, error: GatewayError, body: unknown): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  if (body instanceof ErrorAnswer) {
    reply.headers(body.headers);
    return reply.code(body.status).type('application/json').send(typeof body.body === 'string' ? body.body : JSON.stringify(body.body));
  }
  return reply.code(error.status).type('application/json').send(JSON.stringify(body));
}

/**
 * A Fastify error handler answering in `envelope` (each client API has its own; the rest answer in the
 * OpenAI one): the key's x-ratelimit-* headers, the error mapped to the registry, remembered for the
 * request's outcome, and — for a body refused as too large — the rest of the body read first, so that the
 * client, still sending, reads the answer. `recast`: the API's own status and codes for an error.
 */
export function errorRenderer(
  deps: Pick<ServerDeps, 'limiter' | 'config' | 'log'>,
  envelope: (error: GatewayError, requestId: string) => unknown,
  recast?: (error: GatewayError) => GatewayError,
) {
  return async function renderError(error: unknown, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    await addRateLimitHeaders(deps.limiter, deps.config.limits, request, reply);
    const rendered = toResponseError(error, deps.log, request.id);
    request.answeredError = rendered;
    if (rendered.code === 'request_too_large') await drainRefusedBody(request.raw);
    const answered = recast ? recast(rendered) : rendered;
    return sendError(reply, answered, envelope(answered, request.id));
  };
}

/**
 * The same envelope as a complete HTTP/1.1 response in bytes, for errors found before any request
 * exists (malformed or oversized headers, timeouts): only the socket is there to write to, and the
 * connection cannot be trusted to carry another request, so the response closes it.
 */
export function rawErrorResponse(error: GatewayError, requestId: string): string {
  const body = JSON.stringify(error.toBody());
  return (
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}\r\n` +
    'content-type: application/json; charset=utf-8\r\n' +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    `x-request-id: ${requestId}\r\n` +
    'connection: close\r\n\r\n' +
    body
  );
}
