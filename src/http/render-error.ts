// The one place errors become HTTP responses: the convention's envelope, never a stack trace.
import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { GatewayError, isGatewayError } from '../errors.js';

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

export function sendError(reply: FastifyReply, error: GatewayError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  return reply.code(error.status).type('application/json').send(JSON.stringify(error.toBody()));
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
