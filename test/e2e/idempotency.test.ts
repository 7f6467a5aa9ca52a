// Idempotency-Key on chat (stream and not) and embeddings (product.md §13, ADR 0019): a retry never runs
// or bills twice; in flight → 409; finished → the recorded answer (a stream chunk for chunk); another
// body → 422; an answer over billing.idempotency_max_bytes is served but not kept, and says so.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import OpenAI from 'openai';
import { assertLedgerSettled, ledgerKinds } from '../support/ledger-check.js';
import { assertErrorResponse, call, costOf, postChat, startE2E, stopE2E, type E2E } from '../support/e2e.js';
import { mockConfig } from '../support/gateway-process.js';
import { chatChunks, chatCompletion, defaultReply, sseFromChunks, type MockHandler } from '../support/mock-upstream.js';

/** A TCP proxy in front of the gateway that, on its first connection, swallows the gateway's answer and drops the client. */
async function startDroppingProxy(target: URL): Promise<{ url: string; dropped: () => number; close: () => Promise<void> }> {
  let connections = 0;
  let dropped = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const first = connections++ === 0;
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    client.pipe(upstream);
    upstream.on('data', (data) => {
      if (!first) return void client.write(data);
      // The gateway has answered (and billed): the client never sees it.
      dropped++;
      client.destroy();
      upstream.destroy();
    });
    upstream.on('end', () => client.end());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    dropped: () => dropped,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A mock handler that answers only once `open()` is called (to keep a first request in flight). */
function gated(): { handler: MockHandler; open: () => void; arrived: Promise<void> } {
  let open!: () => void;
  let arrived!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const seen = new Promise<void>((resolve) => (arrived = resolve));
  return {
    handler: async (req) => {
      arrived();
      await gate;
      return defaultReply(req);
    },
    open,
    arrived: seen,
  };
}

describe('Idempotency-Key', () => {
  let e: E2E;

  before(async () => {
    e = await startE2E((mock) => `${mockConfig(mock)}billing:\n  idempotency_max_bytes: 4096\n`);
  });

  after(() => stopE2E(e));

  test('the real SDK, retrying after its connection dropped once the upstream had answered, gets the answer and is charged once', async () => {
    e.mock.reset();
    const key = await e.gw.createKey({ name: 'sdk-retry', balance: 1 });
    const proxy = await startDroppingProxy(new URL(e.gw.baseURL));
    try {
      const client = new OpenAI({ apiKey: key.key, baseURL: proxy.url, maxRetries: 2, timeout: 20_000 });
      const completion = await client.chat.completions.create(
        { model: 'gpt-test', messages: [{ role: 'user', content: 'charge me once' }], max_tokens: 50 },
        { headers: { 'Idempotency-Key': 'retry-1' } },
      );
      assert.equal(proxy.dropped(), 1, 'the first answer was dropped');
      assert.ok(completion.choices[0]!.message.content);
      assert.equal(e.mock.requests.length, 1, 'the upstream was called once');
      assert.deepEqual(ledgerKinds(e.gw, key.id).filter((k) => k === 'capture'), ['capture'], 'one capture');
      const audit = assertLedgerSettled(e.gw, key.id);
      assert.equal(audit.spent, costOf(completion.usage));
    } finally {
      await proxy.close();
    }
  });

  test('two concurrent calls with one Idempotency-Key: one runs, the other gets 409; a later retry gets the answer', async () => {
    e.mock.reset();
    const gate = gated();
    const key = await e.gw.createKey({ name: 'concurrent', balance: 1 });
    e.mock.handle(gate.handler);
    const body = { model: 'gpt-test', messages: [{ role: 'user', content: 'once' }], max_tokens: 20 };
    const headers = { 'idempotency-key': 'same' };
    const first = postChat(e.gw, key.key, body, { headers });
    await gate.arrived;
    const second = await postChat(e.gw, key.key, body, { headers });
    assertErrorResponse(second, 409, 'idempotency_in_progress');
    gate.open();
    const firstRes = await first;
    assert.equal(firstRes.status, 200, firstRes.text);
    const replay = await postChat(e.gw, key.key, body, { headers });
    assert.equal(replay.status, 200);
    assert.equal(replay.headers.get('x-tollgate-idempotency'), 'replayed');
    assert.equal(replay.text, firstRes.text, 'the recorded answer, byte for byte');
    assert.equal(e.mock.requests.length, 1);
    assert.equal(assertLedgerSettled(e.gw, key.id).spent, costOf(firstRes.json.usage));
  });

  test('a stream is replayed chunk for chunk, and billed once', async () => {
    e.mock.reset();
    e.mock.handle(() => sseFromChunks(chatChunks({ content: 'one two three four' })));
    const key = await e.gw.createKey({ name: 'stream-replay', balance: 1 });
    const body = { model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'stream it' }], max_tokens: 20 };
    const headers = { 'idempotency-key': 'stream-1' };
    const original = await postChat(e.gw, key.key, body, { headers });
    assert.equal(original.status, 200);
    const replay = await postChat(e.gw, key.key, body, { headers });
    assert.equal(replay.status, 200);
    assert.match(replay.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(replay.headers.get('x-tollgate-idempotency'), 'replayed');
    const events = (text: string) => text.split('\n\n').filter(Boolean);
    assert.deepEqual(events(replay.text), events(original.text));
    assert.ok(events(original.text).length > 4);
    assert.equal(e.mock.requests.length, 1);
    assert.deepEqual(ledgerKinds(e.gw, key.id).filter((k) => k === 'capture'), ['capture']);
  });

  test('the same Idempotency-Key with another body is 422, and nothing moves', async () => {
    e.mock.reset();
    const key = await e.gw.createKey({ name: 'mismatch', balance: 1 });
    const headers = { 'idempotency-key': 'k-mismatch' };
    const ok = await postChat(e.gw, key.key, { model: 'gpt-test', messages: [{ role: 'user', content: 'a' }], max_tokens: 5 }, { headers });
    assert.equal(ok.status, 200);
    const before = ledgerKinds(e.gw, key.id);
    const other = await postChat(e.gw, key.key, { model: 'gpt-test', messages: [{ role: 'user', content: 'b' }], max_tokens: 5 }, { headers });
    assertErrorResponse(other, 422, 'idempotency_mismatch');
    assert.deepEqual(ledgerKinds(e.gw, key.id), before);
    assert.equal(e.mock.requests.length, 1);
  });

  test('keys of two Tollgate keys never meet; a refused request may be retried with the same Idempotency-Key', async () => {
    e.mock.reset();
    const a = await e.gw.createKey({ name: 'scope-a', balance: 1 });
    const poor = await e.gw.createKey({ name: 'scope-poor', balance: 0 });
    const body = { model: 'gpt-test', messages: [{ role: 'user', content: 'x' }], max_tokens: 5 };
    const headers = { 'idempotency-key': 'shared' };
    assert.equal((await postChat(e.gw, a.key, body, { headers })).status, 200);
    assertErrorResponse(await postChat(e.gw, poor.key, body, { headers }), 402, 'insufficient_balance');
    await e.gw.cli(['keys', 'topup', poor.id, '1']);
    const retried = await postChat(e.gw, poor.key, body, { headers });
    assert.equal(retried.status, 200, 'the refusal was not recorded');
    assert.equal(retried.headers.get('x-tollgate-idempotency'), null);
    assert.equal(e.mock.requests.length, 2);
  });

  test('embeddings: replayed and billed once', async () => {
    e.mock.reset();
    const key = await e.gw.createKey({ name: 'embed', balance: 1 });
    const send = () => call(e.gw, 'POST', '/embeddings', { key: key.key, body: { model: 'embed-test', input: 'hello' }, headers: { 'idempotency-key': 'e1' } });
    const first = await send();
    const again = await send();
    assert.equal(first.status, 200);
    assert.equal(again.text, first.text);
    assert.equal(e.mock.requests.length, 1);
    assert.equal(assertLedgerSettled(e.gw, key.id).spent, costOf(first.json.usage));
  });

  test('an answer over billing.idempotency_max_bytes is served, said not stored, and not run again', async () => {
    e.mock.reset();
    // A stream whose recording outgrows the 4 KiB cap of this test's config.
    e.mock.handle(() => sseFromChunks(chatChunks({ content: 'long '.repeat(2000) })));
    const key = await e.gw.createKey({ name: 'too-large', balance: 1 });
    const body = { model: 'gpt-test', messages: [{ role: 'user', content: 'big' }], max_tokens: 900 };
    const headers = { 'idempotency-key': 'big-1' };
    const res = await fetch(`${e.gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ ...body, stream: true }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('trailer') ?? '', /x-tollgate-idempotency/);
    const text = await res.text();
    assert.ok(text.endsWith('data: [DONE]\n\n'), 'the whole stream was served');
    const again = await postChat(e.gw, key.key, { ...body, stream: true }, { headers });
    assertErrorResponse(again, 409, 'idempotency_not_replayable');
    assert.equal(again.headers.get('x-should-retry'), 'false');
    assert.equal(e.mock.requests.length, 1, 'never run again');
    // A JSON answer over the cap says so in a header.
    e.mock.handle(() => ({ json: chatCompletion({ content: 'long '.repeat(2000) }) }));
    const json = await postChat(e.gw, key.key, body, { headers: { 'idempotency-key': 'big-json' } });
    assert.equal(json.status, 200);
    assert.equal(json.headers.get('x-tollgate-idempotency'), 'not-stored');
    assertErrorResponse(await postChat(e.gw, key.key, body, { headers: { 'idempotency-key': 'big-json' } }), 409, 'idempotency_not_replayable');
    assert.equal(e.mock.requests.length, 2);
    assertLedgerSettled(e.gw, key.id);
  });
});
