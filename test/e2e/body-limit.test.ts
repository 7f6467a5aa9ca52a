// End to end: a body over server.max_body_bytes is answered 413 request_too_large in the OpenAI envelope,
// and the client READS that answer — the real openai SDK surfaces an APIError 413, not EPIPE or a socket
// hang-up — whether the body declared its length (refused before a byte of it is read) or arrives chunked
// and crosses the limit mid-way. The gateway drains the refused body so the client can finish sending,
// but only within bounds: a client that never stops sending is cut off. Nothing is held, charged or
// forwarded.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { APIError, type OpenAI } from 'openai';
import type { CreatedKey } from '../support/gateway-process.js';
import { mockConfig } from '../support/gateway-process.js';
import { assertChatOk, assertErrorResponse, extendConfig, postChat, sdk, startE2E, stopE2E, type E2E, type RawResponse } from '../support/e2e.js';
import { ledgerKinds } from '../support/ledger-check.js';
import { DRAIN_MAX_BYTES } from '../../src/http/refused-body.js';
import { connectRaw, parseResponses, withTimeout, type RawConnection } from '../support/raw-http.js';

const MiB = 1024 * 1024;
const SMALL_LIMIT = 256 * 1024;
const DEFAULT_LIMIT = 32 * MiB;
const messages = [{ role: 'user', content: 'Hello' }];

/** A chat body whose JSON text is exactly `bytes` long (the SDK sends JSON.stringify of its params). */
function chatBodyOfSize(bytes: number): { model: string; messages: Array<{ role: 'user'; content: string }> } {
  const empty = JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: '' }] }).length;
  return { model: 'gpt-test', messages: [{ role: 'user', content: 'x'.repeat(bytes - empty) }] };
}

/** The SDK's call; resolves with the APIError it threw (anything else fails the test). */
async function sdkError(client: OpenAI, body: ReturnType<typeof chatBodyOfSize>): Promise<APIError> {
  try {
    await client.chat.completions.create(body);
  } catch (error) {
    assert.ok(error instanceof APIError, `an APIError, got ${String(error)}`);
    return error;
  }
  assert.fail('the oversized request succeeded');
}

function assertTooLarge(error: APIError): void {
  assert.equal(error.status, 413, `status 413, got ${error.status} (${error.message})`);
  assert.equal(error.code, 'request_too_large');
  assert.equal(error.type, 'invalid_request_error');
  assert.ok(error.requestID?.startsWith('req_'), 'the x-request-id is read');
}

/**
 * An app's session: a normal call, then the oversized one, `rounds` times on the SDK's kept-alive
 * connections. Whether a torn-down connection loses the answer is a race, so one round could pass by luck.
 */
async function oversizedRounds(client: OpenAI, body: ReturnType<typeof chatBodyOfSize>, rounds = 5): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    const ok = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hello' }] });
    assert.equal(ok.object, 'chat.completion');
    assertTooLarge(await sdkError(client, body));
  }
}

/** A body stream of `total` bytes of JSON-ish text in 64 KiB chunks: fetch sends it chunked (no length). */
function chunkedBody(total: number): ReadableStream<Uint8Array> {
  const chunk = new Uint8Array(64 * 1024).fill(0x78);
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent === 0) {
        const head = new TextEncoder().encode('{"model":"gpt-test","messages":[{"role":"user","content":"');
        controller.enqueue(head);
        sent += head.length;
      } else if (sent >= total) {
        controller.enqueue(new TextEncoder().encode('"}]}'));
        controller.close();
      } else {
        controller.enqueue(chunk);
        sent += chunk.length;
      }
    },
  });
}

const port = (e: E2E) => Number(new URL(e.gw.origin).port);

const requestHead = (key: CreatedKey, framing: string) =>
  `POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${key.key}\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`;

/** Writes `chunk` again and again, as fast as the socket takes it, until the gateway closes; returns the bytes written. */
async function sendUntilClosed(conn: RawConnection, chunk: Buffer): Promise<number> {
  let open = true;
  let sent = 0;
  void conn.closed.then(() => (open = false));
  const pump = async () => {
    while (open && !conn.socket.destroyed) {
      sent += chunk.length;
      if (!conn.socket.write(chunk)) await new Promise((resolve) => conn.socket.once('drain', resolve).once('close', resolve));
    }
  };
  void pump();
  await withTimeout(conn.closed, 60_000, () => conn.socket.destroy());
  return sent;
}

/** The key's money as the ledger has it (not its usage rows: a refused request may be recorded, at cost 0). */
function moneyOf(e: E2E, key: CreatedKey) {
  const { balance, held, spent, derived, activeHolds, captures } = e.gw.audit(key.id);
  return { balance, held, spent, derived, activeHolds, captures };
}

/** After `calls` normal calls and as many refused ones: only the normal calls were forwarded and charged. */
function assertOnlyNormalCallsCharged(e: E2E, key: CreatedKey, before: ReturnType<typeof moneyOf>, calls: number): void {
  const now = moneyOf(e, key);
  assert.equal(e.mock.requests.length, calls, 'only the normal calls reached the upstream');
  assert.equal(now.captures - before.captures, calls, 'one charge per normal call');
  assert.equal(now.activeHolds, 0, 'no hold left');
  assert.equal(now.held, 0);
}

async function postChunked(e: E2E, key: string, total: number): Promise<RawResponse> {
  const res = await fetch(`${e.gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: chunkedBody(total),
    duplex: 'half',
    signal: AbortSignal.timeout(30_000),
  } as RequestInit);
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: JSON.parse(text) };
}

describe('a body over a small server.max_body_bytes', () => {
  let e: E2E;
  let key: CreatedKey;

  before(async () => {
    e = await startE2E((mock) => extendConfig(mockConfig(mock), { server: `  max_body_bytes: ${SMALL_LIMIT}` }));
    key = await e.gw.createKey({ name: 'big-bodies', balance: 10 });
  });
  after(() => stopE2E(e));
  beforeEach(() => e.mock.reset());

  /** Runs `send`, then proves nothing was held, charged or forwarded and the gateway still serves. */
  async function leavesNoTrace<T>(send: () => Promise<T>): Promise<T> {
    const money = moneyOf(e, key);
    const entries = ledgerKinds(e.gw, key.id).length;
    const result = await send();
    assert.deepEqual(moneyOf(e, key), money, 'no hold, no charge');
    assert.equal(ledgerKinds(e.gw, key.id).length, entries, 'no ledger entry');
    assert.equal(e.mock.requests.length, 0, 'no upstream call');
    return result;
  }

  test('the openai SDK sending one byte over the limit (Content-Length) gets an APIError 413 request_too_large', async () => {
    const before = moneyOf(e, key);
    await oversizedRounds(sdk(e.gw, key.key), chatBodyOfSize(SMALL_LIMIT + 1));
    assertOnlyNormalCallsCharged(e, key, before, 5);
    // A body of exactly the limit is served.
    assertChatOk(await postChat(e.gw, key.key, chatBodyOfSize(SMALL_LIMIT)), 'gpt-test');
  });

  test('the openai SDK sending several MiB over the limit still reads the 413 (the refused body is drained)', async () => {
    const before = moneyOf(e, key);
    await oversizedRounds(sdk(e.gw, key.key), chatBodyOfSize(8 * MiB));
    assertOnlyNormalCallsCharged(e, key, before, 5);
  });

  test('a chunked body that crosses the limit mid-way gets the 413 envelope, read by the client', async () => {
    const res = await leavesNoTrace(() => postChunked(e, key.key, 4 * MiB));
    assertErrorResponse(res, 413, 'request_too_large');
    assertChatOk(await postChat(e.gw, key.key, { model: 'gpt-test', messages }), 'gpt-test');
  });

  test('a client that never stops sending a chunked body is answered 413 and cut off after a bounded drain', async () => {
    await leavesNoTrace(async () => {
      const conn = await connectRaw(port(e));
      conn.socket.write(requestHead(key, 'Transfer-Encoding: chunked'));
      const chunk = Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(0x10000, 0x78), Buffer.from('\r\n')]);
      await sendUntilClosed(conn, chunk);
      // Whatever arrived before the cut is the 413 (the gateway answers before it closes).
      if (conn.received().length > 0) assert.equal(parseResponses(conn.received())[0]?.status, 413);
    });
    assertChatOk(await postChat(e.gw, key.key, { model: 'gpt-test', messages }), 'gpt-test');
  });

  test('a body that declares more than the gateway would drain is not read: the connection is closed at once', async () => {
    await leavesNoTrace(async () => {
      const conn = await connectRaw(port(e));
      conn.socket.write(requestHead(key, `Content-Length: ${1024 * MiB}`));
      const sent = await sendUntilClosed(conn, Buffer.alloc(0x10000, 0x78));
      assert.ok(sent < DRAIN_MAX_BYTES, `the gateway stopped reading after ${sent} bytes, before the drain bound`);
    });
  });

  test('a client that keeps dripping a chunked body is answered 413 and cut off after a bounded time', async () => {
    await leavesNoTrace(async () => {
      const conn = await connectRaw(port(e));
      conn.socket.write(requestHead(key, 'Transfer-Encoding: chunked'));
      // Over the limit at once, then one small chunk every 100 ms, forever.
      conn.socket.write(`${(SMALL_LIMIT + 1).toString(16)}\r\n${'x'.repeat(SMALL_LIMIT + 1)}\r\n`);
      const drip = setInterval(() => {
        if (!conn.socket.destroyed) conn.socket.write('10\r\nxxxxxxxxxxxxxxxx\r\n');
      }, 100);
      try {
        await withTimeout(conn.closed, 60_000, () => conn.socket.destroy());
      } finally {
        clearInterval(drip);
      }
      const [response] = parseResponses(conn.received());
      assert.equal(response?.status, 413, 'a slow sender is not reset: it gets the answer, then the close');
      assert.equal(JSON.parse(response.body).error.code, 'request_too_large');
    });
  });
});

describe('a body over the default server.max_body_bytes (32 MiB)', () => {
  let e: E2E;
  let key: CreatedKey;

  before(async () => {
    e = await startE2E();
    key = await e.gw.createKey({ name: 'huge-bodies', balance: 10 });
  });
  after(() => stopE2E(e));

  test('the openai SDK sending a 33 MiB body gets an APIError 413 request_too_large, with no trace', async () => {
    const before = moneyOf(e, key);
    await oversizedRounds(sdk(e.gw, key.key), chatBodyOfSize(DEFAULT_LIMIT + MiB));
    assertOnlyNormalCallsCharged(e, key, before, 5);
  });
});
