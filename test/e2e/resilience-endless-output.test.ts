// Resilience, output metering in constant memory: an upstream that streams content as fast as 32 MB/s,
// never finishing and never sending usage, until the provider's `timeouts.total_ms` (4 s here) cuts it.
// The gateway's memory stays bounded (peak RSS from /proc/<pid>/status VmHWM, sampled VmRSS as well, less
// the RSS before: under 150 MB), the client's stream ends with the upstream_timeout error event and
// [DONE], and the key is charged the estimate — input plus the output delivered, capped at the hold —
// never $0. The gateway serves normally afterwards.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { assertChatOk, postChat } from '../support/e2e.js';
import { startGateway, stopGateway, type CreatedKey, type GatewayProcess } from '../support/gateway-process.js';
import { holdOf } from '../support/ledger-check.js';
import { chatChunks, formatSseEvent, startMockUpstream, type MockHandler, type MockUpstream } from '../support/mock-upstream.js';
import { chatCostNano } from '../support/money.js';
import { assertLedgerExact, costNanoOf, hello, memoryOf, requestEntries, resilienceConfig, sleep, usageById } from '../support/resilience.js';

const MB = 1024 * 1024;
const TOTAL_MS = 4_000;
const RATE_BYTES_PER_S = 32 * MB;
const MAX_OUTPUT_TOKENS = 1000;

/** Ordinary prose: what a runaway model would write. */
const PROSE =
  'The gateway relays every chunk as it arrives and keeps only what it needs to bill the request. ' +
  'Nothing about a long answer should make it hold the whole answer in memory. ';

/**
 * 200 with a role chunk, then content chunks of 16 KB of prose at up to RATE_BYTES_PER_S, no usage and
 * no end, until the gateway closes the connection.
 */
function endlessContent(): MockHandler {
  return async (_req, res: http.ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    const [role] = chatChunks({ usageMode: 'none' });
    res.write(formatSseEvent(JSON.stringify(role)));
    let content = '';
    while (content.length < 16 * 1024) content += PROSE;
    const event = formatSseEvent(JSON.stringify({ ...role, choices: [{ index: 0, delta: { content }, finish_reason: null }] }));
    const startedAt = performance.now();
    let sent = 0;
    while (!res.destroyed) {
      const ahead = sent / RATE_BYTES_PER_S - (performance.now() - startedAt) / 1000;
      if (ahead > 0.01) await sleep(ahead * 1000);
      sent += event.length;
      if (!res.write(event)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done).off('close', done);
            resolve();
          };
          res.on('drain', done).on('close', done);
        });
      }
    }
  };
}

interface StreamRead {
  status: number;
  requestId: string;
  bytes: number;
  /** The last 64 KB of the body. */
  tail: string;
}

/** POSTs a streaming chat request and reads the whole answer as it comes, keeping only its tail. */
async function readStream(gw: GatewayProcess, key: string): Promise<StreamRead> {
  const res = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: hello, stream: true, max_tokens: MAX_OUTPUT_TOKENS }),
    signal: AbortSignal.timeout(60_000),
  });
  const decoder = new TextDecoder();
  let bytes = 0;
  let tail = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    tail = (tail + decoder.decode(chunk, { stream: true })).slice(-64 * 1024);
  }
  return { status: res.status, requestId: res.headers.get('x-request-id') ?? '', bytes, tail };
}

describe('output metering in constant memory', () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;
  let key: CreatedKey;

  before(async () => {
    mock = await startMockUpstream();
    gw = await startGateway({
      config: resilienceConfig({
        providers: { a: { url: mock.url, extra: [`timeouts: { connect_ms: 2000, first_byte_ms: 5000, idle_ms: 5000, total_ms: ${TOTAL_MS} }`] } },
        models: { m: { upstreams: [{ provider: 'a' }] } },
      }),
    });
    key = await gw.createKey({ name: 'endless', balance: 10 });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
  });

  test(`an upstream streaming 32 MB/s of content until total_ms: memory bounded, the timeout error event, charged the estimate (> 0, ≤ hold)`, async () => {
    const pid = gw.child.pid!;
    const before = memoryOf(pid);
    mock.handle(endlessContent());
    let sampling = true;
    let sampledPeak = before.rss;
    const sampler = (async () => {
      while (sampling) {
        sampledPeak = Math.max(sampledPeak, memoryOf(pid).rss);
        await sleep(100);
      }
    })();
    const startedAt = performance.now();
    const read = await readStream(gw, key.key);
    const seconds = (performance.now() - startedAt) / 1000;
    sampling = false;
    await sampler;
    const after = memoryOf(pid);
    const growth = Math.max(after.peak, sampledPeak) - before.rss;
    console.log(
      `endless stream: ${(read.bytes / MB).toFixed(0)} MB relayed in ${seconds.toFixed(1)} s; gateway RSS before ${(before.rss / MB).toFixed(0)} MB, ` +
        `peak ${(Math.max(after.peak, sampledPeak) / MB).toFixed(0)} MB (growth ${(growth / MB).toFixed(0)} MB), after ${(after.rss / MB).toFixed(0)} MB`,
    );
    assert.equal(read.status, 200);
    assert.ok(read.bytes > 10 * MB, `the upstream's output reached the client (${(read.bytes / MB).toFixed(0)} MB)`);
    assert.ok(growth < 150 * MB, `peak RSS grew by ${(growth / MB).toFixed(0)} MB (< 150 MB)`);

    const events = read.tail.split('\n\n').filter((e) => e.startsWith('data: '));
    assert.equal(events.at(-1), 'data: [DONE]');
    const last = JSON.parse(events.at(-2)!.slice('data: '.length)) as { error?: Record<string, unknown> };
    assert.equal(last.error?.code, 'upstream_timeout', `the stream ends with the timeout error: ${events.at(-2)?.slice(0, 200)}`);
    assert.deepEqual(Object.keys(last.error!).sort(), ['code', 'message', 'param', 'type']);

    const entries = requestEntries(gw, read.requestId);
    assert.deepEqual(
      entries.map((e) => e.kind),
      ['hold', 'release', 'capture'],
    );
    const hold = holdOf(gw, read.requestId)!.amount;
    const row = (await usageById(gw, key.id)).get(read.requestId)!;
    assert.equal(row.usage_source, 'estimated');
    assert.equal(row.status, 504);
    const capture = entries.find((e) => e.kind === 'capture')!.amount;
    assert.ok(capture > 0, 'never $0');
    assert.ok(capture <= hold, 'never more than the hold');
    assert.equal(capture, Math.min(chatCostNano(row.input_tokens, row.output_tokens), hold), 'the estimate: input + output delivered, capped at the hold');
    assert.equal(costNanoOf(row), capture);
    assert.ok(row.output_tokens > MAX_OUTPUT_TOKENS, `the output delivered was counted (${row.output_tokens} tokens)`);
    assertLedgerExact(gw, key.id);

    mock.reset();
    const res = await postChat(gw, key.key, { model: 'm', messages: hello });
    assert.equal(assertChatOk(res, 'm'), chatCostNano(11, 7), 'the gateway still answers normally');
  });
});
