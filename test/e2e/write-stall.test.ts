// End to end: a client that opens a stream and never reads it (issue 15 item 5). Once the socket
// buffers are full, the gateway waits at most server.write_stall_ms for the client to drain; then it
// cuts the connection, closes the upstream call and settles as for a client disconnect (estimate,
// capped at the hold, status 499). Before, the wait had no end and the hold was extended for ever.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { CreatedKey } from '../support/gateway-process.js';
import { mockConfig } from '../support/gateway-process.js';
import type { MockHandler } from '../support/mock-upstream.js';
import { assertChatOk, extendConfig, postChat, startE2E, stopE2E, waitFor, type E2E } from '../support/e2e.js';
import { holdOf } from '../support/ledger-check.js';
import { assertLedgerExact, costNanoOf, usageById } from '../support/resilience.js';
import { connectRaw, withTimeout } from '../support/raw-http.js';

const WRITE_STALL_MS = 1_500;
/** Far more than loopback socket buffers hold (a few MB each way), so the client's socket fills. */
const UPSTREAM_CAP_BYTES = 96 * 1024 * 1024;
const messages = [{ role: 'user', content: 'Write at length.' }];

/** An OpenAI stream of content chunks (ordinary words) as fast as the gateway takes them, honouring backpressure, until it hangs up or the cap. */
function floodingStream(counter: { bytes: number }): MockHandler {
  const text = 'the quick brown fox jumps over the lazy dog '.repeat(180);
  const frame = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-flood', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const drained = (res: ServerResponse) =>
    new Promise<void>((resolve) => {
      res.once('drain', resolve);
      res.once('close', resolve);
    });
  return async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    res.write(frame({ role: 'assistant', content: '' }));
    const chunk = frame({ content: text });
    while (!res.destroyed && counter.bytes < UPSTREAM_CAP_BYTES) {
      counter.bytes += chunk.length;
      if (!res.write(chunk)) await drained(res);
    }
    if (!res.destroyed) res.end(`${frame({}, 'stop')}data: [DONE]\n\n`);
  };
}

describe('a client that never reads its stream (server.write_stall_ms)', () => {
  let e: E2E;
  let key: CreatedKey;

  before(async () => {
    e = await startE2E((mock) => extendConfig(mockConfig(mock), { server: `  write_stall_ms: ${WRITE_STALL_MS}` }));
    key = await e.gw.createKey({ name: 'stall', balance: 10 });
  });
  after(() => stopE2E(e));
  beforeEach(() => e.mock.reset());

  test('is cut after write_stall_ms of full buffers: connection closed, upstream closed, the estimate captured (≤ hold), no hold left', async (t) => {
    const flooded = { bytes: 0 };
    e.mock.handle(floodingStream(flooded));
    const body = JSON.stringify({ model: 'gpt-test', messages, stream: true, max_tokens: 500 });
    const conn = await connectRaw(Number(new URL(e.gw.origin).port));
    conn.socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${key.key}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    // Read up to the response head (for the request id), then never read again.
    assert.ok(await waitFor(() => conn.received().includes('\r\n\r\n'), 10_000), 'the stream started');
    conn.socket.pause();
    const stoppedReadingAt = Date.now();
    const requestId = /\r\nx-request-id: (\S+)\r\n/i.exec(conn.received())?.[1];
    assert.ok(requestId, 'x-request-id on the stream');
    assert.match(conn.received(), /^HTTP\/1\.1 200 /);

    // The gateway gives up on the client and hangs up on the upstream.
    const upstream = await waitFor(() => e.mock.requests[0]?.abortedAt, 30_000);
    assert.ok(upstream, `the upstream call was closed (the mock had sent ${flooded.bytes} bytes)`);
    assert.ok(flooded.bytes < UPSTREAM_CAP_BYTES, 'the upstream was stopped before it ran out of data');
    const cutAfterMs = upstream - stoppedReadingAt;
    assert.ok(cutAfterMs >= WRITE_STALL_MS, `not before write_stall_ms (${cutAfterMs} ms)`);
    assert.ok(cutAfterMs < WRITE_STALL_MS + 15_000, `cut ${cutAfterMs} ms after the client stopped reading`);
    t.diagnostic(`the upstream sent ${(flooded.bytes / 1048576).toFixed(1)} MB; cut ${cutAfterMs} ms after the client stopped reading`);

    // Settled as a client disconnect: the estimate, capped at the hold, status 499; no hold left.
    const hold = await waitFor(() => {
      const h = holdOf(e.gw, requestId);
      return h?.status === 'active' ? undefined : h;
    }, 15_000);
    assert.ok(hold, 'the hold was closed');
    assert.equal(hold.status, 'captured');
    const row = (await usageById(e.gw, key.id)).get(requestId);
    assert.ok(row, 'a usage row');
    assert.equal(row.status, 499);
    assert.equal(row.usage_source, 'estimated');
    assert.ok(costNanoOf(row) > 0, 'charged');
    assert.ok(costNanoOf(row) <= hold.amount, `the charge ${costNanoOf(row)} is within the hold ${hold.amount}`);
    assertLedgerExact(e.gw, key.id);

    // The client's connection was closed: once it reads again it gets what was in flight, then the end
    // of the connection — and no [DONE] (its stream was cut, not finished).
    conn.socket.resume();
    await withTimeout(conn.closed, 15_000, () => conn.socket.destroy());
    assert.ok(!conn.received().includes('data: [DONE]'), 'the cut stream has no [DONE]');

    // The gateway serves the next request.
    e.mock.handle(null);
    assertChatOk(await postChat(e.gw, key.key, { model: 'gpt-test', messages }), 'gpt-test');
  });
});
