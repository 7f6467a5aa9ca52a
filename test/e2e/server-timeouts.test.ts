// End to end: the server's own timeouts (issue 15 item 5). A client that drips its headers (slowloris)
// is dropped about server.headers_timeout_ms after it starts — 10 s by default, where Node's defaults
// under Fastify took 88 s; server.request_timeout_ms bounds receiving a request and never cuts a
// response, however long; an idle keep-alive connection is closed after server.keep_alive_timeout_ms.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { CreatedKey } from '../support/gateway-process.js';
import { mockConfig } from '../support/gateway-process.js';
import { delayed, slowDrip } from '../support/mock-upstream.js';
import { assertChatOk, extendConfig, finalUsageChunk, postChat, startE2E, stopE2E, waitFor, type E2E } from '../support/e2e.js';
import { assertLedgerSettled } from '../support/ledger-check.js';
import { postStream } from '../support/resilience.js';
import { assertProtocolError, connectRaw, withTimeout } from '../support/raw-http.js';

const messages = [{ role: 'user', content: 'Hello' }];
const portOf = (e: E2E) => Number(new URL(e.gw.origin).port);

/** Opens a connection that sends one byte of a never-ending header every second; resolves when the gateway closes it. */
async function slowloris(port: number, limitMs: number): Promise<{ closedAfterMs: number; bytesSent: number; received: string }> {
  const conn = await connectRaw(port);
  const header = `GET /health HTTP/1.1\r\nHost: gw\r\nX-Slow: ${'a'.repeat(1000)}`;
  let sent = 0;
  conn.socket.write(header[sent++]!);
  const drip = setInterval(() => {
    if (!conn.socket.destroyed) conn.socket.write(header[sent++ % header.length]!);
  }, 1000);
  try {
    const closedAfterMs = await withTimeout(conn.closed, limitMs, () => conn.socket.destroy());
    return { closedAfterMs, bytesSent: sent, received: conn.received() };
  } finally {
    clearInterval(drip);
  }
}

describe('server timeouts: defaults', () => {
  let e: E2E;
  before(async () => {
    e = await startE2E();
  });
  after(() => stopE2E(e));

  test('a client that sends one header byte per second is dropped with 408 about 10 s after it starts, not 88', async () => {
    const { closedAfterMs, bytesSent, received } = await slowloris(portOf(e), 30_000);
    assertProtocolError(received, 408, 'request_timeout');
    assert.ok(closedAfterMs >= 10_000, `not before the 10 s default (${closedAfterMs} ms)`);
    assert.ok(closedAfterMs < 14_000, `dropped ${closedAfterMs} ms after connecting (${bytesSent} bytes sent)`);
  });
});

describe('server timeouts: configured', () => {
  const HEADERS_MS = 1_000;
  const REQUEST_MS = 1_500;
  const KEEP_ALIVE_MS = 1_000;
  let e: E2E;
  let key: CreatedKey;

  before(async () => {
    e = await startE2E((mock) =>
      extendConfig(mockConfig(mock), {
        server: `  headers_timeout_ms: ${HEADERS_MS}\n  request_timeout_ms: ${REQUEST_MS}\n  keep_alive_timeout_ms: ${KEEP_ALIVE_MS}`,
      }),
    );
    key = await e.gw.createKey({ name: 'timeouts', balance: 10 });
  });
  after(() => stopE2E(e));
  beforeEach(() => e.mock.reset());

  test('server.headers_timeout_ms drops a slow-header client after that long', async () => {
    const { closedAfterMs, received } = await slowloris(portOf(e), 15_000);
    assertProtocolError(received, 408, 'request_timeout');
    assert.ok(closedAfterMs >= HEADERS_MS, `not before the timeout (${closedAfterMs} ms)`);
    assert.ok(closedAfterMs < HEADERS_MS + 4_000, `dropped ${closedAfterMs} ms after connecting`);
  });

  test('a stream that lasts longer than server.request_timeout_ms is delivered whole and billed exactly', async () => {
    e.mock.handle(slowDrip(400));
    const startedAt = Date.now();
    const stream = await postStream(e.gw, key.key, { model: 'gpt-test', messages });
    assert.ok(Date.now() - startedAt > REQUEST_MS + 1_000, 'the stream outlasted the request timeout by a margin');
    assert.equal(stream.status, 200);
    assert.equal(stream.error, undefined, 'no error event');
    finalUsageChunk(stream.chunks, 'gpt-test');
    assertLedgerSettled(e.gw, key.id);
  });

  test('a non-stream answer that takes longer than server.request_timeout_ms is delivered', async () => {
    e.mock.handle(delayed(REQUEST_MS + 1_000));
    assertChatOk(await postChat(e.gw, key.key, { model: 'gpt-test', messages }), 'gpt-test');
  });

  test('an idle keep-alive connection is closed after server.keep_alive_timeout_ms', async () => {
    const conn = await connectRaw(portOf(e));
    conn.socket.write('GET /health HTTP/1.1\r\nHost: gw\r\n\r\n');
    assert.ok(await waitFor(() => conn.received().endsWith('{"status":"ok"}')), 'the response arrived');
    const answeredAt = Date.now();
    assert.match(conn.received(), /\r\nKeep-Alive: timeout=1\r\n/i, 'the response announces the keep-alive timeout');
    await withTimeout(conn.closed, 10_000, () => conn.socket.destroy());
    const idleMs = Date.now() - answeredAt;
    assert.ok(idleMs >= KEEP_ALIVE_MS - 100, `kept for the timeout (${idleMs} ms)`);
    assert.ok(idleMs < KEEP_ALIVE_MS + 3_000, `closed ${idleMs} ms after the response`);
  });
});
