// Resilience, cool-down (`cooldown: {failures, seconds}`): kept per upstream — the pair (provider, upstream
// model) — so a failing model or Azure deployment never takes the account's other models down; skipped
// while cooling unless every upstream of the model is (panic routing: they are still called); an upstream
// 429 asking for longer than the cool-down is believed. Failures are never charged.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { assertChatOk, assertErrorResponse, postChat } from '../support/e2e.js';
import { startGateway, stopGateway, type CreatedKey, type GatewayProcess } from '../support/gateway-process.js';
import { defaultReply, errorReply, startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { chatCostNano } from '../support/money.js';
import {
  NO_COOLDOWN,
  assertLedgerExact,
  attemptsOf,
  costNanoOf,
  hello,
  ledgerTotals,
  requestEntries,
  resilienceConfig,
  sleep,
  usageById,
} from '../support/resilience.js';

const CHARGE = chatCostNano(11, 7);
const idOf = (res: { headers: Headers }) => res.headers.get('x-request-id')!;

/** Every request id failed without a charge: its hold was released, no capture, a usage row with cost 0. */
async function assertNotCharged(gw: GatewayProcess, keyId: string, ids: string[]): Promise<void> {
  const rows = await usageById(gw, keyId);
  for (const id of ids) {
    assert.deepEqual(requestEntries(gw, id).map((e) => e.kind), ['hold', 'release'], `request ${id}: held, then released`);
    assert.equal(costNanoOf(rows.get(id)!), 0, `request ${id} cost nothing`);
  }
}

describe('cool-down: skipping a failing upstream and trying it again', () => {
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
          c: { url: c.url, extra: ['retries: 1', 'cooldown: { failures: 2, seconds: 30 }'] },
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
      ids.push(idOf(res));
    }
    const cooledAt = a.requests[1]!.receivedAt;
    assert.equal(a.requests.length, 2, 'A saw the two failing attempts, then nothing while cooling down');
    assert.equal(b.requests.length, 4, 'B served all four');

    // A recovers; once its cool-down is over it is first in line again.
    a.handle(null);
    await sleep(Math.max(0, cooledAt + 2_000 - Date.now()) + 500);
    const res = await postChat(gw, key.key, { model: 'ab-model', messages: hello });
    assert.equal(assertChatOk(res, 'ab-model'), CHARGE);
    ids.push(idOf(res));
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

  test('a single upstream cooling down is still called (panic routing), and answers 200 as soon as it recovers', async () => {
    c.handle(errorReply(500, 'C is down'));
    // retries: 1 → two failed attempts in one request start a 30 s cool-down.
    const first = await postChat(gw, key.key, { model: 'c-model', messages: hello });
    assertErrorResponse(first, 502, 'upstream_error');
    assert.equal(c.requests.length, 2);

    // Cooling down, and still failing: the gateway calls it anyway (with its usual retry) and passes the failure on.
    const second = await postChat(gw, key.key, { model: 'c-model', messages: hello });
    const error = assertErrorResponse(second, 502, 'upstream_error');
    assert.match(error.message, /C is down/, "the upstream's own failure, not a cool-down refusal");
    assert.equal(c.requests.length, 4, 'the cooling upstream was called: one attempt and its retry');

    // It recovers well inside its 30 s cool-down: the next call reaches it and succeeds.
    c.handle(null);
    const third = await postChat(gw, key.key, { model: 'c-model', messages: hello });
    assert.equal(assertChatOk(third, 'c-model'), CHARGE);
    assert.equal(c.requests.length, 5);
    assert.ok(c.requests[4]!.receivedAt - c.requests[1]!.receivedAt < 30_000, 'still inside the cool-down period');

    await assertNotCharged(gw, key.id, [idOf(first), idOf(second)]);
    const rows = await usageById(gw, key.id);
    assert.deepEqual(attemptsOf(rows.get(idOf(second))!), ['c:500', 'c:500']);
    assert.deepEqual(attemptsOf(rows.get(idOf(third))!), ['c:200']);
    assert.equal(costNanoOf(rows.get(idOf(third))!), CHARGE);
    assertLedgerExact(gw, key.id);
  });
});

describe('cool-down per upstream: one provider account, several models', () => {
  let p: MockUpstream;
  let az: MockUpstream;
  let gw: GatewayProcess;
  let key: CreatedKey;

  before(async () => {
    [p, az] = await Promise.all([startMockUpstream(), startMockUpstream()]);
    gw = await startGateway({
      config: resilienceConfig({
        providers: {
          p: { url: p.url, extra: ['retries: 0', 'cooldown: { failures: 2, seconds: 60 }'] },
          az: { url: az.origin, kind: 'azure-openai', extra: ['retries: 0', 'cooldown: { failures: 2, seconds: 60 }'] },
        },
        models: {
          'x-model': { upstreams: [{ provider: 'p', model: 'model-x' }] },
          'y-model': { upstreams: [{ provider: 'p', model: 'model-y' }] },
          'az-broken': { upstreams: [{ provider: 'az', model: 'deployment-broken' }] },
          'az-healthy': { upstreams: [{ provider: 'az', model: 'deployment-healthy' }] },
        },
      }),
    });
    key = await gw.createKey({ name: 'per-upstream', balance: 10 });
  });
  after(async () => {
    await Promise.all([p, az].map((m) => m?.close()));
    if (gw) await stopGateway(gw, 10_000);
  });

  test('model X failing until it cools down leaves model Y of the same provider answering 200, and the upstream sees Y\'s calls', async () => {
    // Anthropic-style overload on model-x only.
    p.handle((req) => (req.body?.model === 'model-x' ? errorReply(529, 'Overloaded', { type: 'overloaded_error' }) : defaultReply(req)));
    const failed: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await postChat(gw, key.key, { model: 'x-model', messages: hello });
      assertErrorResponse(res, 502, 'upstream_error');
      failed.push(idOf(res));
    }
    assert.equal(p.requests.filter((r) => r.body?.model === 'model-x').length, 3, 'X is called even while cooling (its only upstream)');

    const served: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await postChat(gw, key.key, { model: 'y-model', messages: hello });
      assert.equal(assertChatOk(res, 'y-model'), CHARGE);
      served.push(idOf(res));
    }
    assert.equal(p.requests.filter((r) => r.body?.model === 'model-y').length, 5, "the upstream saw every one of Y's calls");

    // X recovers while its 60 s cool-down still runs: its next call reaches the upstream and is served.
    p.handle(null);
    const recovered = await postChat(gw, key.key, { model: 'x-model', messages: hello });
    assert.equal(assertChatOk(recovered, 'x-model'), CHARGE);
    assert.equal(p.requests.filter((r) => r.body?.model === 'model-x').length, 4);

    await assertNotCharged(gw, key.id, failed);
    const rows = await usageById(gw, key.id);
    for (const id of [...served, idOf(recovered)]) assert.equal(costNanoOf(rows.get(id)!), CHARGE);
    for (const id of failed) assert.deepEqual(attemptsOf(rows.get(id)!), ['p:529']);
    assertLedgerExact(gw, key.id);
  });

  test('two Azure deployments on one resource: the broken one cools down, the other keeps serving', async () => {
    az.handle((req) => (req.path.includes('/deployments/deployment-broken/') ? errorReply(500, 'deployment failure') : defaultReply(req)));
    const failed: string[] = [];
    const served: string[] = [];
    for (let i = 0; i < 4; i++) {
      const bad = await postChat(gw, key.key, { model: 'az-broken', messages: hello });
      assertErrorResponse(bad, 502, 'upstream_error');
      failed.push(idOf(bad));
      const good = await postChat(gw, key.key, { model: 'az-healthy', messages: hello });
      assert.equal(assertChatOk(good, 'az-healthy'), CHARGE);
      served.push(idOf(good));
    }
    assert.equal(az.requests.filter((r) => r.path.includes('/deployments/deployment-healthy/')).length, 4);
    assert.equal(az.requests.filter((r) => r.path.includes('/deployments/deployment-broken/')).length, 4);
    await assertNotCharged(gw, key.id, failed);
    const rows = await usageById(gw, key.id);
    for (const id of served) assert.deepEqual(attemptsOf(rows.get(id)!), ['az:200']);
    assertLedgerExact(gw, key.id);
  });
});

describe('what counts towards a cool-down', () => {
  let limited: MockUpstream;
  let spare: MockUpstream;
  let gw: GatewayProcess;
  let key: CreatedKey;

  before(async () => {
    [limited, spare] = await Promise.all([startMockUpstream(), startMockUpstream()]);
    gw = await startGateway({
      config: resilienceConfig({
        providers: {
          // A 1 s cool-down after 5 failures: only the Retry-After can cool it after one 429.
          limited: { url: limited.url, extra: ['retries: 1', 'cooldown: { failures: 5, seconds: 1 }'] },
          spare: { url: spare.url, extra: [NO_COOLDOWN] },
        },
        models: {
          'only-limited': { upstreams: [{ provider: 'limited', model: 'solo' }] },
          'with-spare': { upstreams: [{ provider: 'limited', model: 'shared' }, { provider: 'spare' }] },
          'picky-model': { upstreams: [{ provider: 'limited', model: 'picky' }, { provider: 'spare' }] },
        },
      }),
    });
    key = await gw.createKey({ name: 'retry-after', balance: 10 });
  });
  after(async () => {
    await Promise.all([limited, spare].map((m) => m?.close()));
    if (gw) await stopGateway(gw, 10_000);
  });

  test('with a fallback: the 429 cools the upstream for its Retry-After, so later requests go straight to the fallback', async () => {
    limited.handle({ ...errorReply(429, 'Rate limit reached'), headers: { 'retry-after': '120' } });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await postChat(gw, key.key, { model: 'with-spare', messages: hello });
      assert.equal(assertChatOk(res, 'with-spare'), CHARGE);
      ids.push(idOf(res));
    }
    assert.equal(limited.requests.filter((r) => r.body?.model === 'shared').length, 1, 'one 429, not retried (120 s is too long to wait), then skipped');
    assert.equal(spare.requests.length, 3);
    const rows = await usageById(gw, key.id);
    assert.deepEqual(ids.map((id) => attemptsOf(rows.get(id)!)), [['limited:429', 'spare:200'], ['spare:200'], ['spare:200']]);
    limited.reset();
    spare.reset();
  });

  test('alone: the client gets 429 upstream_rate_limited with the Retry-After, and the next call still reaches the upstream', async () => {
    limited.handle({ ...errorReply(429, 'Rate limit reached'), headers: { 'retry-after': '120' } });
    const before = ledgerTotals(gw, key.id);
    const first = await postChat(gw, key.key, { model: 'only-limited', messages: hello });
    assertErrorResponse(first, 429, 'upstream_rate_limited');
    assert.equal(first.headers.get('retry-after'), '120', "the upstream's Retry-After is passed on");
    assert.equal(limited.requests.length, 1, 'a Retry-After of 120 s is not waited for');

    const second = await postChat(gw, key.key, { model: 'only-limited', messages: hello });
    assertErrorResponse(second, 429, 'upstream_rate_limited');
    assert.equal(limited.requests.length, 2, 'cooling, but its only upstream: called anyway');

    limited.handle(null);
    const third = await postChat(gw, key.key, { model: 'only-limited', messages: hello });
    assert.equal(assertChatOk(third, 'only-limited'), CHARGE);
    await assertNotCharged(gw, key.id, [idOf(first), idOf(second)]);
    const after = ledgerTotals(gw, key.id);
    assert.equal(after.captureCount - before.captureCount, 1, 'only the served request was charged');
    assertLedgerExact(gw, key.id);
  });

  test('upstream 400s never cool an upstream down: after more of them than `failures`, it still serves first', async () => {
    limited.handle((req) => (req.body?.model === 'picky' ? errorReply(400, "Invalid 'temperature'", { param: 'temperature' }) : defaultReply(req)));
    const rejected: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await postChat(gw, key.key, { model: 'picky-model', messages: hello });
      assertErrorResponse(res, 400, /./);
      rejected.push(idOf(res));
    }
    assert.equal(spare.requests.length, 0, 'a 400 is the answer: no fallback');
    limited.handle(null);
    const res = await postChat(gw, key.key, { model: 'picky-model', messages: hello });
    assert.equal(assertChatOk(res, 'picky-model'), CHARGE);
    assert.equal(spare.requests.length, 0, 'not cooling: the first upstream served');
    const rows = await usageById(gw, key.id);
    assert.deepEqual(attemptsOf(rows.get(idOf(res))!), ['limited:200']);
    await assertNotCharged(gw, key.id, rejected);
    assertLedgerExact(gw, key.id);
  });
});
