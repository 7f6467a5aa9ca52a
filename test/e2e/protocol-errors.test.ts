// End to end over raw sockets: errors found before a request exists — headers too large (431), bytes
// that are not HTTP/1.1 (400), a request not received in time (408) — get one complete HTTP response
// in the OpenAI envelope, then the connection closes; nothing is held or forwarded, and the gateway
// serves the next request.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { CreatedKey } from '../support/gateway-process.js';
import { mockConfig } from '../support/gateway-process.js';
import { assertChatOk, call, extendConfig, postChat, startE2E, stopE2E, waitFor, type E2E } from '../support/e2e.js';
import { ledgerKinds } from '../support/ledger-check.js';
import { assertProtocolError, connectRaw, exchangeRaw, withTimeout } from '../support/raw-http.js';

const HEADERS_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 2_000;
const messages = [{ role: 'user', content: 'Hello' }];

describe('protocol-level errors in the OpenAI envelope (issue 15 item 4)', () => {
  let e: E2E;
  let key: CreatedKey;
  let port: number;

  before(async () => {
    e = await startE2E((mock) =>
      extendConfig(mockConfig(mock), { server: `  headers_timeout_ms: ${HEADERS_TIMEOUT_MS}\n  request_timeout_ms: ${REQUEST_TIMEOUT_MS}` }),
    );
    key = await e.gw.createKey({ name: 'raw', balance: 10 });
    port = Number(new URL(e.gw.origin).port);
  });
  after(() => stopE2E(e));
  beforeEach(() => e.mock.reset());

  /** Runs `send`, then proves nothing was held, charged or forwarded and the gateway still serves. */
  async function leavesNoTraceAndServes(send: () => Promise<void>): Promise<void> {
    const audit = e.gw.audit(key.id);
    const entries = ledgerKinds(e.gw, key.id).length;
    await send();
    assert.deepEqual(e.gw.audit(key.id), audit, 'no hold, no charge, no usage row');
    assert.equal(ledgerKinds(e.gw, key.id).length, entries, 'no ledger entry');
    assert.equal(e.mock.requests.length, 0, 'no upstream call');
    const health = await call(e.gw, 'GET', '//health');
    assert.equal(health.status, 200);
    assertChatOk(await postChat(e.gw, key.key, { model: 'gpt-test', messages }), 'gpt-test');
  }

  test('headers larger than Node accepts answer 431 headers_too_large and close the connection', () =>
    leavesNoTraceAndServes(async () => {
      const request = `GET /v1/models HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${key.key}\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`;
      const { text } = await exchangeRaw(port, request);
      const error = assertProtocolError(text, 431, 'headers_too_large');
      assert.match(error.message, /headers are larger than \d+ bytes/);
      assert.ok(!text.includes(key.key), 'the key is not echoed');
    }));

  const notHttp: Array<[string, string | Buffer]> = [
    ['a NUL byte in a header name', 'GET /health HTTP/1.1\r\nHost: gw\r\nX-Bad\x00Name: 1\r\n\r\n'],
    ['a control byte in a header value', 'GET /health HTTP/1.1\r\nHost: gw\r\nX-Bad: a\x01b\r\n\r\n'],
    ['a space inside a header name', 'GET /health HTTP/1.1\r\nHost: gw\r\nX Bad: 1\r\n\r\n'],
    ['a request line that is not HTTP', 'THIS IS NOT HTTP\r\n\r\n'],
    ['an unknown HTTP version', 'GET /health HTTP/7.1\r\nHost: gw\r\n\r\n'],
    ['a TLS handshake sent to the plain-HTTP port', Buffer.from('160301020001000100fc0303', 'hex')],
  ];
  for (const [what, bytes] of notHttp) {
    test(`${what} answers 400 invalid_request and closes the connection`, () =>
      leavesNoTraceAndServes(async () => {
        const { text } = await exchangeRaw(port, bytes);
        assertProtocolError(text, 400, 'invalid_request');
      }));
  }

  test('headers that do not arrive within server.headers_timeout_ms answer 408 request_timeout', () =>
    leavesNoTraceAndServes(async () => {
      const conn = await connectRaw(port);
      conn.socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${key.key}\r\nContent-Type: appl`);
      const closedAfterMs = await withTimeout(conn.closed, 15_000, () => conn.socket.destroy());
      const error = assertProtocolError(conn.received(), 408, 'request_timeout');
      assert.doesNotMatch(error.message, /tg-/);
      assert.ok(closedAfterMs >= HEADERS_TIMEOUT_MS, `not before the timeout (${closedAfterMs} ms)`);
      assert.ok(closedAfterMs < HEADERS_TIMEOUT_MS + 5_000, `dropped ${closedAfterMs} ms after connecting`);
    }));

  test('an authenticated body that does not arrive within server.request_timeout_ms answers 408, with no hold and no upstream call', () =>
    leavesNoTraceAndServes(async () => {
      const body = JSON.stringify({ model: 'gpt-test', messages });
      const conn = await connectRaw(port);
      conn.socket.write(
        `POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${key.key}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
      );
      const closedAfterMs = await withTimeout(conn.closed, 15_000, () => conn.socket.destroy());
      assertProtocolError(conn.received(), 408, 'request_timeout');
      assert.ok(closedAfterMs >= REQUEST_TIMEOUT_MS, `not before the timeout (${closedAfterMs} ms)`);
      assert.ok(closedAfterMs < REQUEST_TIMEOUT_MS + 5_000, `dropped ${closedAfterMs} ms after connecting`);
    }));

  /** The 200 of /health, whole, then the 400 envelope, and nothing else. */
  function assertHealthThen400(text: string): void {
    const split = text.indexOf('HTTP/1.1 400');
    assert.ok(split > 0, `a 400 follows the first response: ${JSON.stringify(text)}`);
    assert.match(text.slice(0, split), /^HTTP\/1\.1 200 [\s\S]*\r\n\r\n\{"status":"ok"\}$/, 'the first response is whole, and first');
    assertProtocolError(text.slice(split), 400, 'invalid_request');
  }

  test('bad bytes on a keep-alive connection after a complete exchange are answered after it', async () => {
    const conn = await connectRaw(port);
    conn.socket.write('GET /health HTTP/1.1\r\nHost: gw\r\n\r\n');
    assert.ok(await waitFor(() => conn.received().endsWith('{"status":"ok"}')), 'the first response arrived');
    conn.socket.write('GET /health HTTP/1.1\r\nHost: gw\r\nX-Bad: a\x01b\r\n\r\n');
    await withTimeout(conn.closed, 15_000, () => conn.socket.destroy());
    assertHealthThen400(conn.received());
  });

  test('a pipelined request with bad bytes behind a good one: the good one is answered in full first, then the 400', async () => {
    const conn = await connectRaw(port);
    conn.socket.write('GET /health HTTP/1.1\r\nHost: gw\r\n\r\nGET /health HTTP/1.1\r\nHost: gw\r\nX-Bad: a\x01b\r\n\r\n');
    await withTimeout(conn.closed, 15_000, () => conn.socket.destroy());
    assertHealthThen400(conn.received());
  });
});
