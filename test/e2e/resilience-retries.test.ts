// Resilience, retries on one upstream account: `providers.<id>.retries` extra attempts for a retryable
// failure, with jittered backoff or the upstream's Retry-After when it is short; a long Retry-After is not
// waited for (the next upstream is tried instead, or the 429 reaches the client with its Retry-After).
// Every attempt shares one hold and at most one charge; each is listed in `tollgate usage --json`.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { assertChatOk, assertErrorResponse, costOf, finalUsageChunk, postChat, streamedText } from '../support/e2e.js';
import { startGateway, stopGateway, type CreatedKey, type GatewayProcess } from '../support/gateway-process.js';
import { DEFAULT_TEXT, errorReply, inSequence, resetSocket, startMockUpstream, type JsonReply, type MockUpstream } from '../support/mock-upstream.js';
import { chatCostNano } from '../support/money.js';
import { NO_COOLDOWN, assertLedgerExact, attemptsOf, costNanoOf, hello, postStream, requestEntries, resilienceConfig, usageById } from '../support/resilience.js';

const CHARGE = chatCostNano(11, 7);

function rateLimited(retryAfter: string): JsonReply {
  return { ...errorReply(429, 'Rate limit reached for requests.'), headers: { 'retry-after': retryAfter } };
}

describe('retries on one upstream', () => {
  /** `twice` (retries: 2), alone. */
  let r: MockUpstream;
  /** `solo` (retries: 1), alone. */
  let s: MockUpstream;
  /** `a` (retries: 1) then `b`. */
  let a: MockUpstream;
  let b: MockUpstream;
  let gw: GatewayProcess;
  let key: CreatedKey;

  before(async () => {
    [r, s, a, b] = await Promise.all([startMockUpstream(), startMockUpstream(), startMockUpstream(), startMockUpstream()]);
    gw = await startGateway({
      config: resilienceConfig({
        providers: {
          twice: { url: r.url, extra: ['retries: 2', NO_COOLDOWN] },
          solo: { url: s.url, extra: ['retries: 1', NO_COOLDOWN] },
          a: { url: a.url, extra: ['retries: 1', NO_COOLDOWN] },
          b: { url: b.url, extra: [NO_COOLDOWN] },
        },
        models: {
          'retry-model': { upstreams: [{ provider: 'twice' }] },
          'solo-model': { upstreams: [{ provider: 'solo' }] },
          'ab-model': { upstreams: [{ provider: 'a' }, { provider: 'b' }] },
        },
      }),
    });
    key = await gw.createKey({ name: 'retries', balance: 10 });
  });
  after(async () => {
    await Promise.all([r, s, a, b].map((m) => m?.close()));
    if (gw) await stopGateway(gw, 10_000);
  });
  beforeEach(() => {
    for (const m of [r, s, a, b]) m.reset();
  });

  for (const stream of [false, true]) {
    test(`retries: 2 — an upstream that fails twice (500, then a reset) then answers: success, 3 attempts, one hold, one charge (${stream ? 'stream' : 'non-stream'})`, async () => {
      r.handle(inSequence(errorReply(500, 'boom'), resetSocket()));
      let requestId: string;
      if (stream) {
        const read = await postStream(gw, key.key, { model: 'retry-model', messages: hello });
        assert.equal(read.status, 200, read.text);
        assert.equal(read.error, undefined);
        assert.equal(streamedText(read.chunks), DEFAULT_TEXT);
        assert.equal(costOf(finalUsageChunk(read.chunks, 'retry-model').usage), CHARGE);
        requestId = read.requestId;
      } else {
        const res = await postChat(gw, key.key, { model: 'retry-model', messages: hello });
        assert.equal(assertChatOk(res, 'retry-model'), CHARGE);
        requestId = res.headers.get('x-request-id')!;
      }
      assert.equal(r.requests.length, 3, 'the upstream saw 3 attempts');
      const gaps = [r.requests[1]!.receivedAt - r.requests[0]!.receivedAt, r.requests[2]!.receivedAt - r.requests[1]!.receivedAt];
      assert.ok(gaps[0]! >= 90, `a backoff before the first retry (${gaps[0]} ms; at least 100 ms by design)`);
      assert.ok(gaps[1]! >= 190, `a longer backoff before the second retry (${gaps[1]} ms; at least 200 ms by design)`);
      assert.deepEqual(
        requestEntries(gw, requestId).map((e) => e.kind),
        ['hold', 'release', 'capture'],
      );
      assertLedgerExact(gw, key.id);
      const row = (await usageById(gw, key.id)).get(requestId)!;
      assert.deepEqual(attemptsOf(row), ['twice:500', 'twice:502', 'twice:200']);
      assert.equal(row.status, 200);
      assert.equal(row.usage_source, 'upstream');
      assert.equal(costNanoOf(row), CHARGE);
    });
  }

  test('retries run out: three 503s answer 502 upstream_error, one hold released, nothing charged', async () => {
    r.handle(errorReply(503, 'overloaded'));
    const before = gw.audit(key.id);
    const res = await postChat(gw, key.key, { model: 'retry-model', messages: hello });
    assertErrorResponse(res, 502, 'upstream_error');
    const requestId = res.headers.get('x-request-id')!;
    assert.equal(r.requests.length, 3, '1 + retries: 2 attempts');
    assert.deepEqual(
      requestEntries(gw, requestId).map((e) => e.kind),
      ['hold', 'release'],
    );
    const { audit } = assertLedgerExact(gw, key.id);
    assert.equal(audit.spent, before.spent);
    const row = (await usageById(gw, key.id)).get(requestId)!;
    assert.deepEqual(attemptsOf(row), ['twice:503', 'twice:503', 'twice:503']);
    assert.equal(costNanoOf(row), 0);
  });

  test('Retry-After: 1 on a 429 is honoured: the retry arrives at least ~1 s later, and succeeds', async () => {
    s.handle(inSequence(rateLimited('1')));
    const res = await postChat(gw, key.key, { model: 'solo-model', messages: hello });
    assert.equal(assertChatOk(res, 'solo-model'), CHARGE);
    const requestId = res.headers.get('x-request-id')!;
    assert.equal(s.requests.length, 2);
    const gap = s.requests[1]!.receivedAt - s.requests[0]!.receivedAt;
    assert.ok(gap >= 950, `the retry waited for Retry-After (${gap} ms)`);
    assertLedgerExact(gw, key.id);
    const row = (await usageById(gw, key.id)).get(requestId)!;
    assert.deepEqual(attemptsOf(row), ['solo:429', 'solo:200']);
    assert.equal(costNanoOf(row), CHARGE);
  });

  test('a long Retry-After (60) is not waited for: A is not retried, B answers at once', async () => {
    a.handle(rateLimited('60'));
    const started = Date.now();
    const res = await postChat(gw, key.key, { model: 'ab-model', messages: hello });
    assert.equal(assertChatOk(res, 'ab-model'), CHARGE);
    assert.ok(Date.now() - started < 20_000, 'did not wait a minute');
    const requestId = res.headers.get('x-request-id')!;
    assert.equal(a.requests.length, 1, 'A was not retried');
    assert.equal(b.requests.length, 1, 'B answered');
    assertLedgerExact(gw, key.id);
    const row = (await usageById(gw, key.id)).get(requestId)!;
    assert.equal(row.provider, 'b');
    assert.deepEqual(attemptsOf(row), ['a:429', 'b:200']);
    assert.equal(costNanoOf(row), CHARGE);
  });

  test('a long Retry-After with no other upstream: 429 upstream_rate_limited with the upstream’s Retry-After, hold released', async () => {
    s.handle(rateLimited('60'));
    const before = gw.audit(key.id);
    const res = await postChat(gw, key.key, { model: 'solo-model', messages: hello });
    assertErrorResponse(res, 429, 'upstream_rate_limited');
    assert.equal(res.headers.get('retry-after'), '60');
    assert.equal(s.requests.length, 1, 'not retried');
    const requestId = res.headers.get('x-request-id')!;
    assert.deepEqual(
      requestEntries(gw, requestId).map((e) => e.kind),
      ['hold', 'release'],
    );
    const { audit } = assertLedgerExact(gw, key.id);
    assert.equal(audit.spent, before.spent);
    const row = (await usageById(gw, key.id)).get(requestId)!;
    assert.equal(row.status, 429);
    assert.deepEqual(attemptsOf(row), ['solo:429']);
  });
});
