// Resilience, routing: cool-down (`cooldown: {failures, seconds}` — after that many consecutive failed
// attempts an upstream is skipped, then tried again) and `routing: weighted` (each upstream's `weight`).
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { assertChatOk, assertErrorResponse, postChat } from '../support/e2e.js';
import { startGateway, stopGateway, type CreatedKey, type GatewayProcess } from '../support/gateway-process.js';
import { errorReply, startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { chatCostNano, usdToNano } from '../support/money.js';
import {
  NO_COOLDOWN,
  assertLedgerExact,
  attemptsOf,
  costNanoOf,
  hello,
  ledgerTotals,
  pool,
  resilienceConfig,
  sleep,
  usageById,
} from '../support/resilience.js';

const CHARGE = chatCostNano(11, 7);

describe('cool-down', () => {
  let a: MockUpstream;
  let b: MockUpstream;
  let c: MockUpstream;
  let gw: GatewayProcess;
  let key: CreatedKey;

  before(async () => {
    [a, b, c] = await Promise.all([startMockUpstream(), startMockUpstream(), startMockUpstream()]);
    gw = await startGateway({
      config: resilienceConfig({
        providers: {
          a: { url: a.url, extra: ['retries: 0', 'cooldown: { failures: 2, seconds: 2 }'] },
          b: { url: b.url, extra: [NO_COOLDOWN] },
          c: { url: c.url, extra: ['retries: 1', 'cooldown: { failures: 2, seconds: 2 }'] },
        },
        models: {
          'ab-model': { upstreams: [{ provider: 'a' }, { provider: 'b' }] },
          'c-model': { upstreams: [{ provider: 'c' }] },
        },
      }),
    });
    key = await gw.createKey({ name: 'cooldown', balance: 10 });
  });
  after(async () => {
    await Promise.all([a, b, c].map((m) => m?.close()));
    if (gw) await stopGateway(gw, 10_000);
  });
  beforeEach(() => {
    for (const m of [a, b, c]) m.reset();
  });

  test('after 2 failed attempts A is skipped (it sees no request) and B serves; about 2 s later A is tried again', async () => {
    a.handle(errorReply(500, 'A is down'));
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await postChat(gw, key.key, { model: 'ab-model', messages: hello });
      assert.equal(assertChatOk(res, 'ab-model'), CHARGE);
      ids.push(res.headers.get('x-request-id')!);
    }
    const cooledAt = a.requests[1]!.receivedAt;
    assert.equal(a.requests.length, 2, 'A saw the two failing attempts, then nothing while cooling down');
    assert.equal(b.requests.length, 4, 'B served all four');

    // A recovers; once its cool-down is over it is first in line again.
    a.handle(null);
    await sleep(Math.max(0, cooledAt + 2_000 - Date.now()) + 500);
    const res = await postChat(gw, key.key, { model: 'ab-model', messages: hello });
    assert.equal(assertChatOk(res, 'ab-model'), CHARGE);
    ids.push(res.headers.get('x-request-id')!);
    assert.equal(a.requests.length, 3, 'A was tried again after its cool-down');
    assert.ok(a.requests[2]!.receivedAt - cooledAt >= 2_000, 'not before the cool-down ended');
    assert.equal(b.requests.length, 4, 'and B was not needed');

    const { totals } = assertLedgerExact(gw, key.id);
    assert.equal(totals.holdsByStatus.captured, 5);
    const rows = await usageById(gw, key.id);
    assert.deepEqual(
      ids.map((id) => attemptsOf(rows.get(id)!)),
      [['a:500', 'b:200'], ['a:500', 'b:200'], ['b:200'], ['b:200'], ['a:200']],
    );
    assert.deepEqual(
      ids.map((id) => rows.get(id)!.provider),
      ['b', 'b', 'b', 'b', 'a'],
    );
    for (const id of ids) assert.equal(costNanoOf(rows.get(id)!), CHARGE);
  });

  test('a single upstream cooling down: 502 upstream_error with Retry-After, no hold, the upstream not called', async () => {
    c.handle(errorReply(500, 'C is down'));
    // retries: 1 → two failed attempts in one request start the cool-down.
    const first = await postChat(gw, key.key, { model: 'c-model', messages: hello });
    assertErrorResponse(first, 502, 'upstream_error');
    assert.equal(c.requests.length, 2);
    const before = ledgerTotals(gw, key.id);

    const res = await postChat(gw, key.key, { model: 'c-model', messages: hello });
    assertErrorResponse(res, 502, 'upstream_error');
    const retryAfter = Number(res.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 2, `Retry-After ${res.headers.get('retry-after')}`);
    assert.equal(c.requests.length, 2, 'the upstream was not called');
    const afterTotals = ledgerTotals(gw, key.id);
    assert.equal(afterTotals.holdRows, before.holdRows, 'no hold was placed');
    assert.equal(afterTotals.holdEntries, before.holdEntries);
    assertLedgerExact(gw, key.id);
    const rows = await usageById(gw, key.id);
    assert.ok(!rows.has(res.headers.get('x-request-id')!), 'a request refused before admission has no usage row');
    assert.deepEqual(attemptsOf(rows.get(first.headers.get('x-request-id')!)!), ['c:500', 'c:500']);
  });
});

describe('routing: weighted', () => {
  let a: MockUpstream;
  let b: MockUpstream;
  let gw: GatewayProcess;
  let key: CreatedKey;

  before(async () => {
    [a, b] = await Promise.all([startMockUpstream(), startMockUpstream()]);
    gw = await startGateway({
      config: resilienceConfig({
        providers: { a: { url: a.url, extra: [NO_COOLDOWN] }, b: { url: b.url, extra: [NO_COOLDOWN] } },
        models: { 'w-model': { routing: 'weighted', upstreams: [{ provider: 'a', weight: 3 }, { provider: 'b', weight: 1 }] } },
      }),
    });
    key = await gw.createKey({ name: 'weighted', balance: 10 });
  });
  after(async () => {
    await Promise.all([a, b].map((m) => m?.close()));
    if (gw) await stopGateway(gw, 10_000);
  });

  test('weights 3 and 1 on two healthy upstreams: over 400 requests the split is roughly 3:1', async () => {
    const TOTAL = 400;
    const ids = await pool(TOTAL, 16, async () => {
      const res = await postChat(gw, key.key, { model: 'w-model', messages: hello });
      assert.equal(assertChatOk(res, 'w-model'), CHARGE);
      return res.headers.get('x-request-id')!;
    });
    assert.equal(a.requests.length + b.requests.length, TOTAL, 'one upstream call per request');
    const share = a.requests.length / TOTAL;
    console.log(`weighted 3:1 over ${TOTAL} requests: A ${a.requests.length}, B ${b.requests.length} (A's share ${share})`);
    assert.ok(share >= 0.6 && share <= 0.9, `A's share ${share} (expected about 0.75)`);

    const { totals } = assertLedgerExact(gw, key.id, usdToNano(10));
    assert.equal(totals.captureCount, TOTAL);
    assert.equal(totals.captures, TOTAL * CHARGE);
    const rows = await usageById(gw, key.id);
    assert.equal([...rows.values()].filter((r) => r.provider === 'a').length, a.requests.length, 'usage rows name the upstream that served');
    for (const id of ids) {
      const row = rows.get(id)!;
      assert.deepEqual(attemptsOf(row), [`${row.provider}:200`]);
    }
  });
});
