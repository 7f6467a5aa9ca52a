// Resilience, failures after the first byte: once output has reached the client there is no retry and no
// fallback; the stream ends with `data: {"error":...}` then `data: [DONE]`, settled on an estimate (the
// input estimate plus the output delivered, never more than the hold). Before any output — including a
// 200 stream that announced the assistant role and then died — the failure is retried like any other.
// The model is served by M (retries: 1) then B, so "no retry, no fallback" is visible at both mocks.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, beforeEach, describe, test } from 'node:test';
import { costOf, finalUsageChunk, streamedText, type Json } from '../support/e2e.js';
import { startGateway, stopGateway, type CreatedKey, type GatewayProcess } from '../support/gateway-process.js';
import { holdOf } from '../support/ledger-check.js';
import {
  DEFAULT_TEXT,
  chatChunks,
  cutAfter,
  formatSseEvent,
  inSequence,
  makeUsage,
  sseFromChunks,
  startMockUpstream,
  type MockHandler,
  type MockUpstream,
} from '../support/mock-upstream.js';
import { chatCostNano } from '../support/money.js';
import { NO_COOLDOWN, assertLedgerExact, attemptsOf, costNanoOf, hello, postStream, requestEntries, resilienceConfig, usageById } from '../support/resilience.js';

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Writes the first `n` events of the default stream (one write each, 30 ms apart), then `then(res)`. */
function partialStream(n: number, then: (res: http.ServerResponse) => void): MockHandler {
  return async (_req, res) => {
    const frames = sseFromChunks(chatChunks({ usage: makeUsage(11, 7) })).sse.map(formatSseEvent);
    res.writeHead(200, SSE_HEADERS);
    res.flushHeaders();
    for (const frame of frames.slice(0, n)) {
      res.write(frame);
      await sleep(30);
    }
    then(res);
  };
}

describe('failures after the first byte', () => {
  let m: MockUpstream;
  let b: MockUpstream;
  let gw: GatewayProcess;
  let key: CreatedKey;

  before(async () => {
    [m, b] = await Promise.all([startMockUpstream(), startMockUpstream()]);
    gw = await startGateway({
      config: resilienceConfig({
        providers: { m: { url: m.url, extra: ['retries: 1', NO_COOLDOWN] }, b: { url: b.url, extra: [NO_COOLDOWN] } },
        models: { 'mb-model': { upstreams: [{ provider: 'm' }, { provider: 'b' }] } },
      }),
    });
    key = await gw.createKey({ name: 'midstream', balance: 10 });
  });
  after(async () => {
    await Promise.all([m, b].map((x) => x?.close()));
    if (gw) await stopGateway(gw, 10_000);
  });
  beforeEach(() => {
    m.reset();
    b.reset();
  });

  /** After output reached the client: one upstream request, none at B, an estimated capture within the hold. */
  async function assertEstimatedNoRetry(requestId: string, status: number): Promise<void> {
    assert.equal(m.requests.length, 1, 'no retry after output reached the client');
    assert.equal(b.requests.length, 0, 'no fallback after output reached the client');
    const entries = requestEntries(gw, requestId);
    assert.deepEqual(
      entries.map((e) => e.kind),
      ['hold', 'release', 'capture'],
      'settled once',
    );
    const hold = holdOf(gw, requestId)!.amount;
    const charged = entries[2]!.amount;
    assert.ok(charged > 0 && charged <= hold, `0 < estimated charge ${charged} <= hold ${hold}`);
    assertLedgerExact(gw, key.id);
    const row = (await usageById(gw, key.id)).get(requestId)!;
    assert.equal(row.status, status);
    assert.equal(row.usage_source, 'estimated');
    assert.equal(costNanoOf(row), charged);
    assert.ok(row.output_tokens > 0, 'the output delivered is counted');
    assert.deepEqual(attemptsOf(row), ['m:200']);
  }

  /** Before output: retried on M, which then answers; charged exactly once. */
  async function assertRetriedThenExact(requestId: string, firstAttempt: string): Promise<void> {
    assert.equal(m.requests.length, 2, 'the failed attempt was retried');
    assert.equal(b.requests.length, 0);
    assert.deepEqual(
      requestEntries(gw, requestId).map((e) => e.kind),
      ['hold', 'release', 'capture'],
    );
    assertLedgerExact(gw, key.id);
    const row = (await usageById(gw, key.id)).get(requestId)!;
    assert.equal(row.status, 200);
    assert.equal(row.usage_source, 'upstream');
    assert.equal(costNanoOf(row), chatCostNano(11, 7));
    assert.deepEqual(attemptsOf(row), [firstAttempt, 'm:200']);
  }

  test('cut mid-stream (cutAfter 3): content so far, data: {"error":...}, data: [DONE]; no retry, no fallback; estimated', async () => {
    m.handle(cutAfter(3));
    const read = await postStream(gw, key.key, { model: 'mb-model', messages: hello, max_tokens: 100 });
    assert.equal(read.status, 200);
    assert.equal(streamedText(read.chunks), 'Hello from');
    assert.equal(read.error?.code, 'upstream_error');
    assert.match(read.text, /data: \{"error":\{[^\n]*\}\}\n\ndata: \[DONE\]\n\n$/, 'the error event, then [DONE], end the body');
    await assertEstimatedNoRetry(read.requestId, 502);
  });

  test('a TCP reset after some content: error event then [DONE]; no retry; estimated', async () => {
    m.handle(partialStream(3, (res) => res.socket?.resetAndDestroy()));
    const read = await postStream(gw, key.key, { model: 'mb-model', messages: hello, max_tokens: 100 });
    assert.equal(read.status, 200);
    assert.equal(streamedText(read.chunks), 'Hello from');
    assert.equal(read.error?.code, 'upstream_error');
    await assertEstimatedNoRetry(read.requestId, 502);
  });

  test('a malformed SSE line mid-stream: content so far, an error event, [DONE]; no retry; estimated', async () => {
    const chunks = chatChunks({ content: ['Partial ', 'answer', ' never', ' seen'], usage: makeUsage(11, 7) }).map((c) => JSON.stringify(c));
    m.handle({ rawSse: [formatSseEvent(chunks[0]!), formatSseEvent(chunks[1]!), 'data: {"id":"chatcmpl-x","choices":[{"delta":{"content":\n\n', ...chunks.slice(2).map(formatSseEvent), 'data: [DONE]\n\n'], delayMs: 40 });
    const read = await postStream(gw, key.key, { model: 'mb-model', messages: hello, max_tokens: 100 });
    assert.equal(read.status, 200);
    assert.equal(streamedText(read.chunks), 'Partial ');
    assert.equal(read.error?.code, 'upstream_error');
    assert.match(read.error.message, /malformed/);
    await assertEstimatedNoRetry(read.requestId, 502);
  });

  test('a 200 stream that stops after content without finish or [DONE]: error event, [DONE]; estimated', async () => {
    m.handle(partialStream(3, (res) => res.end()));
    const read = await postStream(gw, key.key, { model: 'mb-model', messages: hello, max_tokens: 100 });
    assert.equal(read.status, 200);
    assert.equal(streamedText(read.chunks), 'Hello from');
    assert.ok(read.error, 'an incomplete stream is reported as an error');
    await assertEstimatedNoRetry(read.requestId, 502);
  });

  test('a complete stream without usage ([DONE], no usage chunk): the usage chunk is the gateway’s estimate, status 200, ≤ hold', async () => {
    m.handle(sseFromChunks(chatChunks({ usageMode: 'none' })));
    const read = await postStream(gw, key.key, { model: 'mb-model', messages: hello, max_tokens: 100 });
    assert.equal(read.status, 200);
    assert.equal(read.error, undefined);
    assert.equal(streamedText(read.chunks), DEFAULT_TEXT);
    const cost = costOf(finalUsageChunk(read.chunks, 'mb-model').usage);
    assert.equal(m.requests.length, 1);
    const hold = holdOf(gw, read.requestId)!.amount;
    assert.ok(cost > 0 && cost <= hold, `0 < ${cost} <= ${hold}`);
    assertLedgerExact(gw, key.id);
    const row = (await usageById(gw, key.id)).get(read.requestId)!;
    assert.equal(row.status, 200);
    assert.equal(row.usage_source, 'estimated');
    assert.equal(costNanoOf(row), cost);
    assert.deepEqual(attemptsOf(row), ['m:200']);
  });

  test('a 200 stream cut right after the bare role chunk is retried (the role chunk was held back): the client sees one clean stream', async () => {
    m.handle(inSequence(cutAfter(1)));
    const read = await postStream(gw, key.key, { model: 'mb-model', messages: hello });
    assert.equal(read.status, 200);
    assert.equal(read.error, undefined);
    assert.equal(streamedText(read.chunks), DEFAULT_TEXT);
    assert.equal(read.chunks.filter((c: Json) => c.choices[0]?.delta?.role === 'assistant').length, 1, 'exactly one role chunk');
    assert.equal(costOf(finalUsageChunk(read.chunks, 'mb-model').usage), chatCostNano(11, 7));
    await assertRetriedThenExact(read.requestId, 'm:502');
  });

  test('a TCP reset after the headers (and the role chunk) but before content is retried', async () => {
    m.handle(inSequence(partialStream(1, (res) => res.socket?.resetAndDestroy())));
    const read = await postStream(gw, key.key, { model: 'mb-model', messages: hello });
    assert.equal(read.status, 200);
    assert.equal(read.error, undefined);
    assert.equal(streamedText(read.chunks), DEFAULT_TEXT);
    assert.equal(read.chunks.filter((c: Json) => c.choices[0]?.delta?.role === 'assistant').length, 1);
    await assertRetriedThenExact(read.requestId, 'm:502');
  });

  test('an error event inside a 200 stream before any content is retried', async () => {
    m.handle(inSequence(sseFromChunks([JSON.stringify({ error: { message: 'overloaded', type: 'server_error', param: null, code: null } })], { done: false })));
    const read = await postStream(gw, key.key, { model: 'mb-model', messages: hello });
    assert.equal(read.status, 200);
    assert.equal(read.error, undefined);
    assert.equal(streamedText(read.chunks), DEFAULT_TEXT);
    await assertRetriedThenExact(read.requestId, 'm:502');
  });
});
