// Resilience, bounded upstream responses: a non-stream body over `server.max_upstream_body_bytes` (2048
// here) is a 502 upstream_error, not retried (a 'too-large' transport failure), hold released; an SSE event
// that never ends (a 20 MB line without a newline: over the decoder's fixed 16 Mi-character event limit,
// which has no config key) ends the request cleanly, and the gateway's memory stays bounded (peak RSS from
// /proc/<pid>/status VmHWM, less the RSS before, under 200 MB). The gateway serves normally afterwards.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, beforeEach, describe, test } from 'node:test';
import { assertChatOk, assertErrorResponse, costOf, finalUsageChunk, postChat, streamedText } from '../support/e2e.js';
import { startGateway, stopGateway, type CreatedKey, type GatewayProcess } from '../support/gateway-process.js';
import { holdOf } from '../support/ledger-check.js';
import { chatChunks, chatCompletion, DEFAULT_TEXT, errorBody, formatSseEvent, inSequence, makeUsage, startMockUpstream, type MockHandler, type MockUpstream } from '../support/mock-upstream.js';
import { chatCostNano } from '../support/money.js';
import {
  NO_COOLDOWN,
  assertLedgerExact,
  attemptsOf,
  costNanoOf,
  hello,
  memoryOf,
  postStream,
  requestEntries,
  resilienceConfig,
  usageById,
} from '../support/resilience.js';

const MAX_UPSTREAM_BODY = 2048;
const HUGE_LINE_BYTES = 20 * 1024 * 1024;
const MB = 1024 * 1024;

/** A 200 event stream: the first `leading` events of the default stream, then one `data:` line of 20 MB that never ends. */
function endlessEvent(leading: number): MockHandler {
  return async (_req, res: http.ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    for (const chunk of chatChunks({ usage: makeUsage(11, 7) }).slice(0, leading)) res.write(formatSseEvent(JSON.stringify(chunk)));
    res.write('data: {"id":"chatcmpl-endless","choices":[{"index":0,"delta":{"content":"');
    const piece = Buffer.alloc(64 * 1024, 'x');
    for (let sent = 0; sent < HUGE_LINE_BYTES && !res.destroyed; sent += piece.length) {
      if (!res.write(piece)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done).off('close', done);
            resolve();
          };
          res.on('drain', done).on('close', done);
        });
      }
    }
    if (!res.destroyed) res.end();
  };
}

describe('bounded upstream responses', () => {
  let a: MockUpstream;
  let b: MockUpstream;
  let gw: GatewayProcess;
  let key: CreatedKey;

  before(async () => {
    [a, b] = await Promise.all([startMockUpstream(), startMockUpstream()]);
    gw = await startGateway({
      config: resilienceConfig({
        providers: { a: { url: a.url, extra: ['retries: 1', NO_COOLDOWN] }, b: { url: b.url, extra: [NO_COOLDOWN] } },
        models: { 'ab-model': { upstreams: [{ provider: 'a' }, { provider: 'b' }] } },
        server: [`max_upstream_body_bytes: ${MAX_UPSTREAM_BODY}`],
      }),
    });
    key = await gw.createKey({ name: 'bounds', balance: 10 });
  });
  after(async () => {
    await Promise.all([a, b].map((m) => m?.close()));
    if (gw) await stopGateway(gw, 10_000);
  });
  beforeEach(() => {
    a.reset();
    b.reset();
  });

  async function assertHealthy(): Promise<void> {
    a.reset();
    const res = await postChat(gw, key.key, { model: 'ab-model', messages: hello });
    assert.equal(assertChatOk(res, 'ab-model'), chatCostNano(11, 7), 'the gateway still answers normally');
    const read = await postStream(gw, key.key, { model: 'ab-model', messages: hello });
    assert.equal(read.status, 200);
    assert.equal(streamedText(read.chunks), DEFAULT_TEXT);
    assert.equal(costOf(finalUsageChunk(read.chunks, 'ab-model').usage), chatCostNano(11, 7));
    assertLedgerExact(gw, key.id);
  }

  test(`a non-stream body of 100 KB over max_upstream_body_bytes (${MAX_UPSTREAM_BODY}): 502 upstream_error, one upstream request (no retry, no fallback), hold released`, async () => {
    const big = chatCompletion({ content: 'x'.repeat(100 * 1024) });
    a.handle({ json: big });
    const res = await postChat(gw, key.key, { model: 'ab-model', messages: hello });
    assertErrorResponse(res, 502, 'upstream_error');
    assert.equal(a.requests.length, 1, 'a too-large body is not retried');
    assert.equal(b.requests.length, 0, 'nor sent to the next upstream');
    const requestId = res.headers.get('x-request-id')!;
    assert.deepEqual(
      requestEntries(gw, requestId).map((e) => e.kind),
      ['hold', 'release'],
    );
    assertLedgerExact(gw, key.id);
    const row = (await usageById(gw, key.id)).get(requestId)!;
    assert.equal(row.status, 502);
    assert.equal(costNanoOf(row), 0);
    assert.deepEqual(attemptsOf(row), ['a:502']);
    await assertHealthy();
  });

  test('a 1 MB upstream error body is read only as far as needed: the 500 is still retried, then B answers', async () => {
    a.handle({ status: 500, json: errorBody('x'.repeat(1024 * 1024), { type: 'server_error' }) });
    const res = await postChat(gw, key.key, { model: 'ab-model', messages: hello });
    assert.equal(assertChatOk(res, 'ab-model'), chatCostNano(11, 7));
    assert.equal(a.requests.length, 2);
    assert.equal(b.requests.length, 1);
    assertLedgerExact(gw, key.id);
    const row = (await usageById(gw, key.id)).get(res.headers.get('x-request-id')!)!;
    assert.deepEqual(attemptsOf(row), ['a:500', 'a:500', 'b:200']);
  });

  test('a 200 body that is not JSON (an HTML page) is a retryable upstream failure: retried, then B answers', async () => {
    a.handle(inSequence({ body: '<html><body>502 Bad Gateway</body></html>' }, { body: '<html>oops' }));
    const res = await postChat(gw, key.key, { model: 'ab-model', messages: hello });
    assert.equal(assertChatOk(res, 'ab-model'), chatCostNano(11, 7));
    assert.equal(a.requests.length, 2);
    assert.equal(b.requests.length, 1);
    const row = (await usageById(gw, key.id)).get(res.headers.get('x-request-id')!)!;
    // A's attempts are recorded with the HTTP status it sent (200) — or 502 for the unusable body; either tells the story.
    const attempts = attemptsOf(row);
    assert.equal(attempts.length, 3);
    for (const x of attempts.slice(0, 2)) assert.match(x, /^a:(200|502)$/);
    assert.equal(attempts[2], 'b:200');
    assertLedgerExact(gw, key.id);
  });

  test('an SSE event that never ends (20 MB without a newline) before any content: 502 upstream_error as JSON, hold released, memory bounded', async () => {
    const pid = gw.child.pid!;
    const before = memoryOf(pid);
    a.handle(endlessEvent(1)); // the role chunk, then the endless event
    const read = await postStream(gw, key.key, { model: 'ab-model', messages: hello }, 60_000);
    assert.equal(read.status, 502, read.text.slice(0, 300));
    assert.equal(read.json.error.code, 'upstream_error');
    const after = memoryOf(pid);
    console.log(`gateway memory: RSS before ${(before.rss / MB).toFixed(0)} MB, peak after ${(after.peak / MB).toFixed(0)} MB, RSS after ${(after.rss / MB).toFixed(0)} MB`);
    assert.ok(after.peak - before.rss < 200 * MB, `peak RSS grew by ${((after.peak - before.rss) / MB).toFixed(0)} MB (< 200 MB)`);
    assert.equal(a.requests.length, 1, 'an over-long event is not retried');
    assert.deepEqual(
      requestEntries(gw, read.requestId).map((e) => e.kind),
      ['hold', 'release'],
    );
    assertLedgerExact(gw, key.id);
    const row = (await usageById(gw, key.id)).get(read.requestId)!;
    assert.equal(row.status, 502);
    assert.equal(costNanoOf(row), 0);
    await assertHealthy();
  });

  test('an SSE event that never ends after some content: the content, an error event, [DONE]; estimated within the hold; memory bounded', async () => {
    const pid = gw.child.pid!;
    const before = memoryOf(pid);
    a.handle(endlessEvent(3)); // role + two content chunks
    const read = await postStream(gw, key.key, { model: 'ab-model', messages: hello, max_tokens: 100 }, 60_000);
    assert.equal(read.status, 200);
    assert.equal(streamedText(read.chunks), 'Hello from');
    assert.equal(read.error?.code, 'upstream_error');
    const after = memoryOf(pid);
    console.log(`gateway memory: RSS before ${(before.rss / MB).toFixed(0)} MB, peak after ${(after.peak / MB).toFixed(0)} MB, RSS after ${(after.rss / MB).toFixed(0)} MB`);
    assert.ok(after.peak - before.rss < 200 * MB, `peak RSS grew by ${((after.peak - before.rss) / MB).toFixed(0)} MB (< 200 MB)`);
    assert.equal(a.requests.length, 1);
    const entries = requestEntries(gw, read.requestId);
    assert.deepEqual(
      entries.map((e) => e.kind),
      ['hold', 'release', 'capture'],
    );
    const hold = holdOf(gw, read.requestId)!.amount;
    assert.ok(entries[2]!.amount > 0 && entries[2]!.amount <= hold);
    assertLedgerExact(gw, key.id);
    const row = (await usageById(gw, key.id)).get(read.requestId)!;
    assert.equal(row.usage_source, 'estimated');
    assert.equal(row.status, 502);
    await assertHealthy();
  });
});
