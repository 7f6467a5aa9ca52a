// Limits shared by several gateways (product.md §8): three gateway processes on one PostgreSQL database
// and one Redis. A key with rpm 60 gets at most 60 admitted across all three in any rolling minute; a
// budget is never exceeded across the three (it is the database's admission). And a Redis that dies
// mid-run: requests keep flowing (the rate limits fail open, a warning is logged, never a 5xx), and the
// limits apply again when it is back.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertErrorResponse, parseJsonOutput, postChat, waitFor, type Json } from '../support/e2e.js';
import { mockConfig, startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { usdToNano } from '../support/money.js';
import { freshPgSchema, postgresSkipReason, type PgSchema } from '../support/postgres.js';
import { redisServerSkipReason, redisSkipReason, startRedisServer, TEST_REDIS_URL, type ThrowawayRedis } from '../support/redis.js';
import { pool, sleep } from '../support/resilience.js';

const BODY = { model: 'gpt-test', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 100 };
const skip = (await postgresSkipReason()) ?? (await redisSkipReason());

describe('three gateways sharing PostgreSQL and Redis', { skip }, () => {
  let mock: MockUpstream;
  let schema: PgSchema;
  const gateways: GatewayProcess[] = [];

  before(async () => {
    mock = await startMockUpstream();
    schema = await freshPgSchema();
    const config = mockConfig(mock, `redis: ${TEST_REDIS_URL}\n`);
    gateways.push(...(await Promise.all([0, 1, 2].map(() => startGateway({ config, database: schema.url })))));
  });
  after(async () => {
    await mock?.close();
    for (const gw of gateways) await stopGateway(gw, 10_000);
    await schema?.drop();
  });

  test('rpm 60: at most 60 admitted across the three in any rolling 60 s, over a 65 s run', { timeout: 120_000 }, async () => {
    const key = parseJsonOutput<Json>(await gateways[0]!.cli(['keys', 'create', '--name', 'shared-rpm', '--balance', '10', '--rpm', '60', '--json']), 'keys create');
    mock.reset();
    const admittedAt: number[] = [];
    let refused = 0;
    let other = 0;
    const startedAt = Date.now();
    // 4 requests a second, round-robin over the three gateways, for 65 s.
    let i = 0;
    while (Date.now() - startedAt < 65_000) {
      const gw = gateways[i++ % 3]!;
      void postChat(gw, key.key, BODY).then((res) => {
        if (res.status === 200) admittedAt.push(Date.now());
        else if (res.status === 429 && res.json?.error?.code === 'rate_limited') refused += 1;
        else other += 1;
      });
      await sleep(250);
    }
    await sleep(1_000);
    assert.equal(other, 0, 'only 200s and 429s');
    admittedAt.sort((a, b) => a - b);
    const upstreamAt = mock.requests.map((r) => r.receivedAt).sort((a, b) => a - b);
    assert.equal(upstreamAt.length, admittedAt.length, 'one upstream call per admitted request');
    // Admission happens a moment before the upstream call; 2 s of slack absorbs that jitter (this file runs
    // beside other end-to-end files: scripts/run-tests.mjs E2E_WAITING). The first 60 are admitted within
    // about 15 s, so the bound is still shown.
    let worst = 0;
    for (let a = 0; a < upstreamAt.length; a++) {
      let b = a;
      while (b < upstreamAt.length && upstreamAt[b]! < upstreamAt[a]! + 58_000) b++;
      worst = Math.max(worst, b - a);
    }
    console.log(`shared rpm 60 over 65 s: ${admittedAt.length} admitted, ${refused} refused; the busiest 58 s held ${worst}`);
    assert.ok(worst <= 60, `at most 60 in any rolling minute, saw ${worst}`);
    const firstMinute = upstreamAt.filter((t) => t < upstreamAt[0]! + 58_000).length;
    assert.equal(firstMinute, 60, 'the limit is reached (so the test shows the bound, not idleness)');
    assert.ok(admittedAt.length > 60, 'and admits again once the window moves on');
  });

  test('a budget across the three gateways is never exceeded: 300 concurrent requests, exactly the covered 30 admitted', { timeout: 60_000 }, async () => {
    const probe = parseJsonOutput<Json>(await gateways[0]!.cli(['keys', 'create', '--name', 'probe', '--json']), 'keys create');
    const hold = usdToNano(assertErrorResponse(await postChat(gateways[0]!, probe.key, BODY), 402, 'insufficient_balance').metadata.hold);
    const budgetUsd = ((30 * hold) / 1e9).toFixed(9);
    const key = parseJsonOutput<Json>(
      await gateways[1]!.cli(['keys', 'create', '--name', 'shared-budget', '--balance', '10', '--budget', budgetUsd, '--budget-period', 'month', '--json']),
      'keys create',
    );
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    mock.reset();
    mock.handle(async (req) => {
      await gate;
      const { defaultReply } = await import('../support/mock-upstream.js');
      return defaultReply(req);
    });
    const pending = Array.from({ length: 300 }, (_, n) => postChat(gateways[n % 3]!, key.key, BODY));
    assert.ok(await waitFor(() => mock.requests.length >= 30, 20_000), 'the covered requests reach the upstream');
    await sleep(1_000);
    assert.equal(mock.requests.length, 30, 'exactly 30 admitted across the three gateways');
    release();
    const results = await Promise.all(pending);
    mock.handle(null);
    assert.equal(results.filter((r) => r.status === 200).length, 30);
    const refused = results.filter((r) => r.status !== 200);
    for (const res of refused) assertErrorResponse(res, 402, 'budget_exceeded');
    const shown = parseJsonOutput<Json>(await gateways[2]!.cli(['keys', 'show', key.id, '--json']), 'keys show');
    assert.ok(usdToNano(shown.budget_used) <= 30 * hold, 'spend within the budget');
    assert.equal(shown.held, 0);
  });
});

describe('Redis dies mid-run', { skip: redisServerSkipReason() }, () => {
  let mock: MockUpstream;
  let redis: ThrowawayRedis;
  let gw: GatewayProcess;

  before(async () => {
    mock = await startMockUpstream();
    redis = await startRedisServer();
    gw = await startGateway({ config: mockConfig(mock, `redis: ${redis.url}\n`) });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
    await redis?.stop();
  });

  test('requests keep flowing (fail open, one warning, no 5xx), and the limits apply again once it is back', { timeout: 60_000 }, async () => {
    const key = parseJsonOutput<Json>(await gw.cli(['keys', 'create', '--name', 'redis-limited', '--balance', '10', '--rpm', '5', '--json']), 'keys create');
    const statuses = async (n: number) => (await pool(n, 4, () => postChat(gw, key.key, BODY))).map((r) => r.status);
    const up = await statuses(10);
    assert.deepEqual([up.filter((s) => s === 200).length, up.filter((s) => s === 429).length], [5, 5], 'limited while Redis answers');

    await redis.kill();
    const down = await statuses(20);
    assert.deepEqual(down, Array(20).fill(200), 'Redis down: every request admitted, none a 5xx');
    const warnings = () => gw.logs.filter((line) => /"level":40/.test(line) && /redis/i.test(line) && /fail/i.test(line));
    // Logged when a reconnect fails (ioredis retries after 100 ms), which the burst may outrun.
    await waitFor(() => warnings().length > 0, 5_000);
    assert.equal(warnings().length, 1, `one warning line for the burst: ${warnings().join('\n')}`);

    await redis.restart();
    // The gateway reconnects by itself; a fresh Redis has counted nothing, so 5 are admitted, then 429.
    let admitted = 0;
    const limitedAgain = await waitFor(async () => {
      const res = await postChat(gw, key.key, BODY);
      assert.ok(res.status === 200 || res.status === 429, `never a 5xx: ${res.status}`);
      if (res.status === 200) admitted += 1;
      return res.status === 429;
    }, 20_000, 100);
    assert.ok(limitedAgain, 'the limits apply again once Redis is back');
    const back = await statuses(10);
    assert.deepEqual(back, Array(10).fill(429), `still limited: ${back}`);
    console.log(`Redis back: ${admitted} admitted before the limit applied again`);
  });
});
