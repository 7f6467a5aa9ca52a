// Raw HTTP/1.1 over node:net for the end-to-end tests that must send what no HTTP client will (oversized
// or invalid header bytes, a request line that is not HTTP, headers dripped a byte at a time, a client
// that never reads) and see exactly what the gateway writes back, byte for byte, until it closes.
import assert from 'node:assert/strict';
import net from 'node:net';
import { assertMatchesSchema } from './openapi.js';
import type { Json } from './e2e.js';

export interface RawConnection {
  readonly socket: net.Socket;
  /** Everything received so far (latin1, so any byte survives). */
  readonly received: () => string;
  /** Resolves when the server closed the connection (or it failed), with the ms since connecting. */
  readonly closed: Promise<number>;
}

/** Connects to the gateway; the caller writes (and may pause reading) through `socket`. */
export async function connectRaw(port: number): Promise<RawConnection> {
  const socket = net.connect(port, '127.0.0.1');
  const startedAt = Date.now();
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (text += chunk));
  const closed = new Promise<number>((resolve) => {
    socket.on('error', () => undefined); // a reset is a close too; the test looks at what arrived
    socket.on('close', () => resolve(Date.now() - startedAt));
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, received: () => text, closed };
}

/** Sends `bytes` on a fresh connection and collects the answer until the server closes (or `timeoutMs`). */
export async function exchangeRaw(port: number, bytes: string | Buffer, timeoutMs = 20_000): Promise<{ text: string; closedAfterMs: number }> {
  const conn = await connectRaw(port);
  conn.socket.write(bytes);
  const closedAfterMs = await withTimeout(conn.closed, timeoutMs, () => conn.socket.destroy());
  return { text: conn.received(), closedAfterMs };
}

export async function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new Error(`no answer within ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([promise, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

export interface ParsedResponse {
  status: number;
  /** Lower-cased names. */
  headers: Record<string, string>;
  body: string;
}

/** Splits a byte stream into HTTP/1.1 responses framed by content-length (what the gateway's errors use). */
export function parseResponses(text: string): ParsedResponse[] {
  const responses: ParsedResponse[] = [];
  let rest = text;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    assert.ok(end > 0, `a complete response head in ${JSON.stringify(rest.slice(0, 200))}`);
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const match = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine!);
    assert.ok(match, `a status line: ${JSON.stringify(statusLine)}`);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length']);
    assert.ok(Number.isInteger(length), `content-length on ${statusLine}`);
    responses.push({ status: Number(match[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return responses;
}

/**
 * The one response a protocol-level error gets: the status, JSON in the OpenAI envelope (all four keys,
 * valid against ErrorResponse) with `code`, an x-request-id, and `connection: close`. Returns `error`.
 */
export function assertProtocolError(text: string, status: number, code: string): Json {
  const responses = parseResponses(text);
  assert.equal(responses.length, 1, `exactly one response: ${JSON.stringify(text)}`);
  const response = responses[0]!;
  assert.equal(response.status, status, `status (${JSON.stringify(text)})`);
  assert.match(response.headers['content-type'] ?? '', /^application\/json/);
  assert.match(response.headers['x-request-id'] ?? '', /^req_/);
  assert.equal(response.headers.connection, 'close');
  const body = JSON.parse(response.body) as Json;
  assertMatchesSchema('ErrorResponse', body);
  assert.deepEqual(Object.keys(body), ['error']);
  assert.deepEqual(Object.keys(body.error), ['message', 'type', 'param', 'code']);
  assert.equal(body.error.code, code);
  assert.equal(body.error.type, 'invalid_request_error');
  assert.equal(body.error.param, null);
  return body.error;
}
