// Resilience, routing: `routing: weighted` (each upstream's `weight`). Cool-down: resilience-cooldown.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertChatOk, postChat } from '../support/e2e.js';
import { startGateway, stopGateway, type CreatedKey, type GatewayProcess } from '../support/gateway-process.js';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { chatCostNano, usdToNano } from '../support/money.js';
import {
  NO_COOLDOWN,
  assertLedgerExact,
  attemptsOf,
  hello,
  pool,
  resilienceConfig,
  usageById,
} from '../support/resilience.js';

const CHARGE = chatCostNano(11, 7);

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
