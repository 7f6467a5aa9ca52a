// Errors Node's HTTP parser and timers raise before a request exists (Node's 'clientError'): headers
// too large, bytes that are not HTTP, a request not received in time. Answered in the same envelope
// as every other error, written straight to the socket, and the connection is closed.
import { maxHeaderSize, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { GatewayError } from '../errors.js';
import type { Logger } from '../log.js';
import { newRequestId } from '../request-id.js';
import { rawErrorResponse } from './render-error.js';

/** After answering, how long a client may take to close its side before the socket is destroyed. */
const LINGER_MS = 2_000;

/** Node's parser and timer error codes → the registry. */
export function protocolError(code: string | undefined): GatewayError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new GatewayError('headers_too_large', { message: `The request headers are larger than ${maxHeaderSize} bytes.` });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new GatewayError('request_timeout');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new GatewayError('request_too_large', { message: 'The chunk extensions of the request body are too large.' });
    default:
      return new GatewayError('invalid_request', { message: 'The request is not valid HTTP/1.1 (request line or header bytes).' });
  }
}

export function clientErrorHandler(log: Logger): (error: NodeJS.ErrnoException, socket: Socket) => void {
  return function answerClientError(error, socket) {
    // A reset connection has no one left to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    // Never the raw bytes (error.rawPacket): they may carry an Authorization header.
    log.debug({ code: error.code }, 'client protocol error');
    const answer = () => {
      if (!socket.writable) return;
      // end(), not destroy(): closing with unread input (the rest of an oversized header) would send
      // a reset, and the client could lose the answer. A client that never closes its side is cut later.
      socket.end(rawErrorResponse(protocolError(error.code), newRequestId()));
      socket.setTimeout(LINGER_MS, () => socket.destroy());
    };
    // Bytes on a connection are one ordered stream of responses: the answer must never land inside or
    // before the response to an earlier request (Node's own handler can put it before).
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (!inFlight || inFlight.writableEnded) answer();
    else if (!inFlight.req.complete && !inFlight.headersSent) answer(); // the error is that request's own (its body, its deadline)
    else if (inFlight.req.complete) inFlight.once('finish', answer); // a pipelined request behind it failed
    else socket.destroy(); // that request's own bytes failed while its response was being written
  };
}
