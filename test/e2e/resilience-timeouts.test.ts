// Resilience, timeouts per provider (`timeouts: {connect_ms, first_byte_ms, idle_ms, total_ms}`): before any
// output reaches the client a timeout is a 504 upstream_timeout (hold released, nothing charged); after it,
// the stream ends with an error event and [DONE], charged an estimate no larger than the hold.
//
// Connect timeout: in this sandbox "non-routable" addresses (10.255.255.1 and the like) are answered at once
// by a transparent proxy, so they never time out. The test uses a local black hole instead — a stopped
// listener whose accept queue is full, so the kernel drops the gateway's SYN — and covers connection
// refused separately.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { assertChatOk, assertErrorResponse, closedPort, postChat, streamedText, waitFor, type Json } from '../support/e2e.js';
import { startGateway, stopGateway, type CreatedKey, type GatewayProcess } from '../support/gateway-process.js';
import { holdOf } from '../support/ledger-check.js';
import { delayed, slowDrip, stall, stallAfter, startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { chatCostNano } from '../support/money.js';
import {
  NO_COOLDOWN,
  assertLedgerExact,
  attemptsOf,
  costNanoOf,
  hello,
  postStream,
  requestEntries,
  resilienceConfig,
  startBlackHole,
  usageById,
  type BlackHole,
} from '../support/resilience.js';

const T = (t: { connect?: number; firstByte?: number; idle?: number; total?: number }) =>
  `timeouts: { connect_ms: ${t.connect ?? 2000}, first_byte_ms: ${t.firstByte ?? 5000}, idle_ms: ${t.idle ?? 5000}, total_ms: ${t.total ?? 30000} }`;

describe('timeouts', () => {
  let hole: BlackHole;
  let f: MockUpstream;
  let i: MockUpstream;
  let t: MockUpstream;
  let b: MockUpstream;
  let gw: GatewayProcess;
  let key: CreatedKey;

  before(async () => {
    hole = await startBlackHole();
    [f, i, t, b] = await Promise.all([startMockUpstream(), startMockUpstream(), startMockUpstream(), startMockUpstream()]);
    const refusedUrl = `http://127.0.0.1:${await closedPort()}/v1`;
    gw = await startGateway({
      config: resilienceConfig({
        providers: {
          hole: { url: hole.url, extra: ['retries: 0', NO_COOLDOWN, T({ connect: 300 })] },
          refused: { url: refusedUrl, extra: ['retries: 0', NO_COOLDOWN] },
          fb: { url: f.url, extra: ['retries: 0', NO_COOLDOWN, T({ firstByte: 300 })] },
          idle: { url: i.url, extra: ['retries: 0', NO_COOLDOWN, T({ idle: 300 })] },
          total: { url: t.url, extra: ['retries: 0', NO_COOLDOWN, T({ firstByte: 10_000, total: 800 })] },
          b: { url: b.url, extra: [NO_COOLDOWN] },
        },
        models: {
          'hole-model': { upstreams: [{ provider: 'hole' }] },
          'hole-b-model': { upstreams: [{ provider: 'hole' }, { provider: 'b' }] },
          'refused-model': { upstreams: [{ provider: 'refused' }] },
          'refused-b-model': { upstreams: [{ provider: 'refused' }, { provider: 'b' }] },
          'fb-model': { upstreams: [{ provider: 'fb' }] },
          'idle-model': { upstreams: [{ provider: 'idle' }] },
          'total-model': { upstreams: [{ provider: 'total' }] },
        },
      }),
    });
    key = await gw.createKey({ name: 'timeouts', balance: 10 });
  });
  after(async () => {
    await Promise.all([f, i, t, b].map((m) => m?.close()));
    hole?.close();
    if (gw) await stopGateway(gw, 10_000);
  });
  beforeEach(() => {
    for (const m of [f, i, t, b]) m.reset();
  });

  /** A request that failed before any output: hold released, no capture, one usage row with cost 0 and these attempts. */
  async function assertReleased(requestId: string, status: number, attempts: string[]): Promise<void> {
    assert.deepEqual(
      requestEntries(gw, requestId).map((e) => e.kind),
      ['hold', 'release'],
      'the hold was released, nothing captured',
    );
    assertLedgerExact(gw, key.id);
    const row = (await usageById(gw, key.id)).get(requestId);
    assert.ok(row, 'a usage row');
    assert.equal(row.status, status);
    assert.equal(costNanoOf(row), 0);
    assert.deepEqual(attemptsOf(row), attempts);
  }

  /** A stream that failed after some output: error event, estimated charge within (0, hold], one capture. */
  async function assertEstimated(requestId: string, status: number, attempts: string[]): Promise<void> {
    const entries = requestEntries(gw, requestId);
    assert.deepEqual(
      entries.map((e) => e.kind),
      ['hold', 'release', 'capture'],
    );
    const hold = holdOf(gw, requestId)!.amount;
    const charged = entries[2]!.amount;
    assert.ok(charged > 0 && charged <= hold, `0 < estimated charge ${charged} <= hold ${hold}`);
    assertLedgerExact(gw, key.id);
    const row = (await usageById(gw, key.id)).get(requestId)!;
    assert.equal(row.status, status);
    assert.equal(row.usage_source, 'estimated');
    assert.equal(costNanoOf(row), charged);
    assert.ok(row.output_tokens > 0, 'the relayed output is counted');
    assert.deepEqual(attemptsOf(row), attempts);
  }

  test('connect_ms 300 against a host that never answers the SYN: 504 upstream_timeout, hold released', async () => {
    const res = await postChat(gw, key.key, { model: 'hole-model', messages: hello });
    assertErrorResponse(res, 504, 'upstream_timeout');
    const requestId = res.headers.get('x-request-id')!;
    await assertReleased(requestId, 504, ['hole:504']);
    const row = (await usageById(gw, key.id)).get(requestId)!;
    assert.ok(row.attempts[0]!.duration_ms >= 250, `the attempt waited for connect_ms (${row.attempts[0]!.duration_ms} ms)`);
  });

  test('a connect timeout on A falls back to B, which is charged', async () => {
    const res = await postChat(gw, key.key, { model: 'hole-b-model', messages: hello });
    assert.equal(assertChatOk(res, 'hole-b-model'), chatCostNano(11, 7));
    assert.equal(b.requests.length, 1);
    const requestId = res.headers.get('x-request-id')!;
    assertLedgerExact(gw, key.id);
    const row = (await usageById(gw, key.id)).get(requestId)!;
    assert.deepEqual(attemptsOf(row), ['hole:504', 'b:200']);
    assert.equal(costNanoOf(row), chatCostNano(11, 7));
  });

  test('connection refused: 502 upstream_error, hold released; with B behind it, B answers', async () => {
    const res = await postChat(gw, key.key, { model: 'refused-model', messages: hello });
    assertErrorResponse(res, 502, 'upstream_error');
    await assertReleased(res.headers.get('x-request-id')!, 502, ['refused:502']);
    const ok = await postChat(gw, key.key, { model: 'refused-b-model', messages: hello });
    assert.equal(assertChatOk(ok, 'refused-b-model'), chatCostNano(11, 7));
    const row = (await usageById(gw, key.id)).get(ok.headers.get('x-request-id')!)!;
    assert.deepEqual(attemptsOf(row), ['refused:502', 'b:200']);
  });

  for (const stream of [false, true]) {
    test(`first_byte_ms 300 with a stalled upstream (${stream ? 'stream' : 'non-stream'}): 504 upstream_timeout as JSON, the upstream connection closed, hold released`, async () => {
      f.handle(stall());
      const res = stream ? await postStream(gw, key.key, { model: 'fb-model', messages: hello }) : await postChat(gw, key.key, { model: 'fb-model', messages: hello });
      assert.equal(res.status, 504, 'no output was sent, so the answer is a plain 504');
      assert.equal(res.json?.error?.code, 'upstream_timeout');
      assert.equal(f.requests.length, 1);
      assert.ok(await waitFor(() => f.requests[0]!.abortedAt, 2000), 'the gateway hung up on the stalled upstream');
      const requestId = stream ? (res as { requestId: string }).requestId : (res as { headers: Headers }).headers.get('x-request-id')!;
      await assertReleased(requestId, 504, ['fb:504']);
    });
  }

  test('idle_ms 300 with a stream whose headers arrive but no event: 504 upstream_timeout as JSON (nothing was sent), hold released', async () => {
    i.handle(stallAfter(0));
    const res = await postStream(gw, key.key, { model: 'idle-model', messages: hello });
    assert.equal(res.status, 504, res.text);
    assert.equal(res.json.error.code, 'upstream_timeout');
    assert.equal(i.requests.length, 1);
    await assertReleased(res.requestId, 504, ['idle:504']);
  });

  test('idle_ms 300 mid-stream (stallAfter): the client gets the content so far, an error event, then [DONE]; charged an estimate ≤ hold', async () => {
    i.handle(stallAfter(3)); // role chunk + two content chunks, then silence with the socket open
    const read = await postStream(gw, key.key, { model: 'idle-model', messages: hello, max_tokens: 100 });
    assert.equal(read.status, 200);
    assert.equal(streamedText(read.chunks), 'Hello from');
    assert.ok(read.error, 'an error event before [DONE]');
    assert.equal(read.error.code, 'upstream_timeout');
    assert.equal(read.chunks.filter((c: Json) => c.choices.length === 0).length, 0, 'no usage chunk');
    assert.equal(i.requests.length, 1, 'no retry after output reached the client');
    assert.ok(await waitFor(() => i.requests[0]!.abortedAt, 2000), 'the gateway closed the stalled upstream');
    await assertEstimated(read.requestId, 504, ['idle:200']);
  });

  test('total_ms 800 with a slow drip that would take ~2 s: the stream is cut with an upstream_timeout error event, charged an estimate', async () => {
    t.handle(slowDrip(250));
    const read = await postStream(gw, key.key, { model: 'total-model', messages: hello, max_tokens: 100 });
    assert.equal(read.status, 200);
    assert.ok(streamedText(read.chunks).length > 0, 'some content arrived');
    assert.notEqual(streamedText(read.chunks), 'Hello from the mock upstream.', 'but not all of it');
    assert.equal(read.error?.code, 'upstream_timeout');
    assert.equal(t.requests.length, 1);
    assert.ok(await waitFor(() => t.requests[0]!.abortedAt, 2000), 'the upstream call was aborted');
    await assertEstimated(read.requestId, 504, ['total:200']);
  });

  test('total_ms 800 with a non-stream upstream that answers after 3 s: 504 upstream_timeout, hold released', async () => {
    t.handle(delayed(3000));
    const started = Date.now();
    const res = await postChat(gw, key.key, { model: 'total-model', messages: hello });
    assertErrorResponse(res, 504, 'upstream_timeout');
    assert.ok(Date.now() - started < 2900, 'the gateway did not wait for the upstream');
    assert.equal(t.requests.length, 1);
    await assertReleased(res.headers.get('x-request-id')!, 504, ['total:504']);
  });
});
