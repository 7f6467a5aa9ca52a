// Resilience, graceful shutdown (`server.shutdown_grace_seconds`): SIGTERM stops accepting (new connections
// are refused; a request arriving on a connection that was already open gets 503 shutting_down), lets the
// in-flight streams finish and settle, and exits 0. Streams still running when the grace period ends are cut
// and settled like client disconnects (estimated, 499), and the process still exits 0 — also when the
// provider would rather drain disconnected streams (`on_client_disconnect: drain`).
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, describe, test } from 'node:test';
import { costOf, finalUsageChunk, ssePayloads, streamedText, validateStreamEvents, waitFor } from '../support/e2e.js';
import { startGateway, stopGateway, type CreatedKey, type GatewayProcess } from '../support/gateway-process.js';
import { holdOf } from '../support/ledger-check.js';
import { chatChunks, makeUsage, slowDrip, sseFromChunks, startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { chatCostNano } from '../support/money.js';
import { NO_COOLDOWN, assertLedgerExact, attemptsOf, costNanoOf, exitOf, hello, resilienceConfig, sleep, usageById } from '../support/resilience.js';

const STREAMS = 5;

interface LiveStream {
  requestId: string;
  /** Resolves with the rest of the body, or the error that ended it. */
  rest: Promise<string | Error>;
  head: string;
}

/** Opens a stream and reads its first event; the rest is read in the background. */
async function openStream(gw: GatewayProcess, key: string): Promise<LiveStream> {
  const res = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sd-model', messages: hello, stream: true, max_tokens: 200 }),
    signal: AbortSignal.timeout(30_000),
  });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const first = await reader.read();
  assert.ok(!first.done);
  const head = decoder.decode(first.value, { stream: true });
  const rest = (async () => {
    let text = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text + decoder.decode();
        text += decoder.decode(value, { stream: true });
      }
    } catch (error) {
      return error as Error;
    }
  })();
  return { requestId: res.headers.get('x-request-id')!, rest, head };
}

/** A raw connection with a request whose headers are not finished yet, so the server counts it as busy, not idle. */
async function halfSentRequest(gw: GatewayProcess, key: string): Promise<{ finish(): Promise<string> }> {
  const url = new URL(gw.origin);
  const socket = net.connect({ host: url.hostname, port: Number(url.port) });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let received = '';
  socket.on('data', (d: Buffer) => (received += d.toString()));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: ${url.host}\r\n`);
  return {
    async finish() {
      const body = JSON.stringify({ model: 'sd-model', messages: hello });
      socket.write(`authorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      await Promise.race([closed, waitFor(() => /\r\n\r\n[\s\S]*\}/.test(received), 5000)]);
      socket.destroy();
      return received;
    },
  };
}

describe('graceful shutdown', () => {
  let mock: MockUpstream;
  const gateways: GatewayProcess[] = [];
  after(async () => {
    await mock?.close();
    for (const gw of gateways) await stopGateway(gw, 10_000);
  });

  async function start(graceSeconds: number, providerExtra: string[] = []): Promise<{ gw: GatewayProcess; key: CreatedKey }> {
    mock ??= await startMockUpstream();
    const gw = await startGateway({
      config: resilienceConfig({
        providers: { m: { url: mock.url, extra: [NO_COOLDOWN, ...providerExtra] } },
        models: { 'sd-model': { upstreams: [{ provider: 'm' }] } },
        server: [`shutdown_grace_seconds: ${graceSeconds}`],
      }),
    });
    gateways.push(gw);
    return { gw, key: await gw.createKey({ name: `grace-${graceSeconds}`, balance: 10 }) };
  }

  test(`SIGTERM with ${STREAMS} streams in flight (grace 10 s): new requests refused, the streams complete and are settled exactly, exit 0`, async () => {
    const { gw, key } = await start(10);
    mock.reset();
    // 14 frames 150 ms apart: each stream runs ~2 s.
    mock.handle(slowDrip(150, sseFromChunks(chatChunks({ content: ['a ', 'b ', 'c ', 'd ', 'e ', 'f ', 'g ', 'h ', 'i ', 'j'], usage: makeUsage(11, 10) }))));
    const streams = await Promise.all(Array.from({ length: STREAMS }, () => openStream(gw, key.key)));
    const pending = await halfSentRequest(gw, key.key);
    const beforeHolds = gw.audit(key.id).activeHolds;
    assert.equal(beforeHolds, STREAMS);

    const exited = exitOf(gw.child);
    const sentAt = Date.now();
    gw.child.kill('SIGTERM');
    await sleep(300);

    // A request on a connection that was already open: 503 shutting_down.
    const raw = await pending.finish();
    assert.match(raw, /^HTTP\/1\.1 503 /, `answer on the open connection: ${raw.slice(0, 200)}`);
    assert.match(raw, /"code":"shutting_down"/);
    assert.match(raw, /\r\nretry-after: \d+\r\n/i);
    // A new connection: refused (the listener is closed).
    const url = new URL(gw.origin);
    const refused = await new Promise<string>((resolve) => {
      const socket = net.connect({ host: url.hostname, port: Number(url.port) });
      socket.once('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
    assert.equal(refused, 'ECONNREFUSED', 'a new connection is refused');

    // The in-flight streams finish normally, with their usage chunk.
    for (const s of streams) {
      const rest = await s.rest;
      assert.ok(typeof rest === 'string', `stream ${s.requestId} completed (${String(rest)})`);
      const { chunks, error } = validateStreamEvents(ssePayloads(s.head + rest));
      assert.equal(error, undefined);
      assert.equal(streamedText(chunks), 'a b c d e f g h i j');
      assert.equal(costOf(finalUsageChunk(chunks, 'sd-model').usage), chatCostNano(11, 10));
    }
    const [code, signal] = await exited;
    assert.deepEqual([code, signal], [0, null], 'exit 0');
    assert.ok(Date.now() - sentAt < 10_000, 'did not wait for the whole grace period');
    assert.equal(mock.requests.length, STREAMS, 'the refused requests never reached the upstream');

    const { totals } = assertLedgerExact(gw, key.id);
    assert.deepEqual(totals.holdsByStatus, { captured: STREAMS });
    assert.equal(totals.captures, STREAMS * chatCostNano(11, 10));
    const rows = await usageById(gw, key.id);
    assert.equal(rows.size, STREAMS, 'no usage row for the refused requests');
    for (const s of streams) {
      const row = rows.get(s.requestId)!;
      assert.equal(row.status, 200);
      assert.equal(row.usage_source, 'upstream');
      assert.equal(costNanoOf(row), chatCostNano(11, 10));
      assert.deepEqual(attemptsOf(row), ['m:200']);
    }
  });

  test(`SIGTERM with grace 1 s and ${STREAMS} streams that need ~7 s: exit 0 after ~1 s, the cut streams settled (estimated, 499), no active hold`, async () => {
    const { gw, key } = await start(1);
    mock.reset();
    // 24 frames 300 ms apart: ~7 s.
    mock.handle(slowDrip(300, sseFromChunks(chatChunks({ content: Array.from({ length: 20 }, (_, i) => `w${i} `), usage: makeUsage(11, 20) }))));
    const streams = await Promise.all(Array.from({ length: STREAMS }, () => openStream(gw, key.key)));

    const exited = exitOf(gw.child);
    const sentAt = Date.now();
    gw.child.kill('SIGTERM');
    const [code, signal] = await exited;
    const tookMs = Date.now() - sentAt;
    assert.deepEqual([code, signal], [0, null], 'exit 0');
    assert.ok(tookMs >= 900, `waited for the grace period (${tookMs} ms)`);
    assert.ok(tookMs < 5000, `did not wait for the streams to finish (${tookMs} ms)`);

    for (const s of streams) {
      const rest = await s.rest;
      const text = typeof rest === 'string' ? s.head + rest : s.head;
      assert.ok(!text.includes('data: [DONE]'), 'the stream was cut before its end');
    }
    assert.ok(await waitFor(() => mock.requests.every((r) => r.abortedAt !== undefined), 2000), 'every upstream call was closed');

    const { totals } = assertLedgerExact(gw, key.id);
    assert.deepEqual(totals.holdsByStatus, { captured: STREAMS });
    const rows = await usageById(gw, key.id);
    assert.equal(rows.size, STREAMS);
    for (const s of streams) {
      const row = rows.get(s.requestId)!;
      assert.equal(row.status, 499);
      assert.equal(row.usage_source, 'estimated');
      const charged = costNanoOf(row);
      assert.ok(charged > 0 && charged <= holdOf(gw, s.requestId)!.amount, `0 < ${charged} <= hold`);
      assert.deepEqual(attemptsOf(row), ['m:200']);
    }
  });

  test('on_client_disconnect: drain does not stretch shutdown: with grace 1 s, streams that need ~7 s are cut and settled, and the process exits soon after the grace period', async () => {
    const { gw, key } = await start(1, ['on_client_disconnect: drain']);
    mock.reset();
    mock.handle(slowDrip(300, sseFromChunks(chatChunks({ content: Array.from({ length: 20 }, (_, i) => `w${i} `), usage: makeUsage(11, 20) }))));
    const streams = await Promise.all(Array.from({ length: STREAMS }, () => openStream(gw, key.key)));

    const exited = exitOf(gw.child);
    const sentAt = Date.now();
    gw.child.kill('SIGTERM');
    const [code, signal] = await exited;
    const tookMs = Date.now() - sentAt;
    assert.deepEqual([code, signal], [0, null], 'exit 0');
    // A process manager's own deadline (e.g. Kubernetes' terminationGracePeriodSeconds) is sized from
    // shutdown_grace_seconds; a gateway still draining past it gets SIGKILLed, and the drained streams
    // would then not be billed at all.
    assert.ok(tookMs < 5000, `exited ${tookMs} ms after SIGTERM (grace 1 s; the streams would need ~7 s)`);
    for (const s of streams) await s.rest;
    const { totals } = assertLedgerExact(gw, key.id);
    assert.deepEqual(totals.holdsByStatus, { captured: STREAMS });
    const rows = await usageById(gw, key.id);
    for (const s of streams) assert.equal(rows.get(s.requestId)!.status, 499);
  });
});
