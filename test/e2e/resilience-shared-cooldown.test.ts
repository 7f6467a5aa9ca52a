// Cool-downs shared through `redis:` (product.md §12): gateway A sees an upstream fail and cools it down;
// gateway B — which never saw a failure — routes around it too, and so does a gateway started later
// (it reads the cool-downs in force). With Redis gone each gateway goes on with its own state.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertChatOk, postChat, waitFor } from '../support/e2e.js';
import { startGateway, stopGateway, type CreatedKey, type GatewayProcess } from '../support/gateway-process.js';
import { errorReply, startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { chatCostNano } from '../support/money.js';
import { redisServerSkipReason, startRedisServer, type ThrowawayRedis } from '../support/redis.js';
import { hello, NO_COOLDOWN, resilienceConfig } from '../support/resilience.js';

const skip = redisServerSkipReason();

function sawSharedCooldown(gw: GatewayProcess): boolean {
  return gw.logs.some((line) => line.includes('"msg":"upstream cooling down, as another gateway saw it"') && line.includes('"provider":"flaky"'));
}

describe('cool-downs shared through redis:', { skip }, () => {
  let redis: ThrowawayRedis;
  let flaky: MockUpstream;
  let backup: MockUpstream;
  const gateways: GatewayProcess[] = [];
  let config: string;
  let key: CreatedKey;
  const CHARGE = chatCostNano(11, 7);

  before(async () => {
    redis = await startRedisServer();
    [flaky, backup] = await Promise.all([startMockUpstream(), startMockUpstream()]);
    config = `${resilienceConfig({
      providers: {
        flaky: { url: flaky.url, extra: ['retries: 0', 'cooldown: { failures: 2, seconds: 60 }'] },
        backup: { url: backup.url, extra: [NO_COOLDOWN] },
      },
      models: { 'shared-model': { upstreams: [{ provider: 'flaky' }, { provider: 'backup' }] } },
    })}redis: ${redis.url}\n`;
    gateways.push(...(await Promise.all([startGateway({ config }), startGateway({ config })])));
    key = await gateways[0]!.createKey({ name: 'shared-cooldown', balance: 10 });
  });

  after(async () => {
    await Promise.all([flaky, backup].map((m) => m?.close()));
    for (const gw of gateways) await stopGateway(gw, 10_000);
    await redis?.stop();
  });

  test('A cools the failing upstream down after 2 failures; B, which saw none, skips it as well', async () => {
    const [a, b] = gateways as [GatewayProcess, GatewayProcess];
    // Both gateways on one SQLite file would be two databases here: B gets its own key in its own file.
    const bKey = await b.createKey({ name: 'shared-cooldown-b', balance: 10 });
    flaky.handle(errorReply(500, 'flaky is down'));
    for (let i = 0; i < 2; i++) {
      assert.equal(assertChatOk(await postChat(a, key.key, { model: 'shared-model', messages: hello }), 'shared-model'), CHARGE, 'served by the backup');
    }
    assert.equal(flaky.requests.length, 2, 'A tried the flaky upstream twice, then cooled it down');
    assert.ok(await waitFor(() => sawSharedCooldown(b), 5_000), 'B learned of the cool-down through Redis');
    for (let i = 0; i < 3; i++) {
      assert.equal(assertChatOk(await postChat(b, bKey.key, { model: 'shared-model', messages: hello }), 'shared-model'), CHARGE);
    }
    assert.equal(flaky.requests.length, 2, 'B never called the cooling upstream');
    assert.equal(backup.requests.length, 5);
  });

  test('a gateway started later reads the cool-downs in force and routes around the upstream from its first request', async () => {
    const late = await startGateway({ config });
    gateways.push(late);
    assert.ok(await waitFor(() => sawSharedCooldown(late), 5_000), 'it read the cool-down at start');
    const lateKey = await late.createKey({ name: 'late', balance: 10 });
    const before = flaky.requests.length;
    assertChatOk(await postChat(late, lateKey.key, { model: 'shared-model', messages: hello }), 'shared-model');
    assert.equal(flaky.requests.length, before, 'the flaky upstream was not called');
  });

  test('with Redis down, each gateway keeps serving on its own cool-down state', async () => {
    await redis.kill();
    const b = gateways[1]!;
    const bKey = await b.createKey({ name: 'redis-down', balance: 10 });
    const before = flaky.requests.length;
    for (let i = 0; i < 3; i++) {
      assert.equal(assertChatOk(await postChat(b, bKey.key, { model: 'shared-model', messages: hello }), 'shared-model'), CHARGE);
    }
    assert.equal(flaky.requests.length, before, 'still cooling: its own copy of the cool-down holds');
  });
});
