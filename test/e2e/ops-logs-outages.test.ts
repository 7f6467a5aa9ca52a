// Logs an on-call engineer can use (product.md §10): when the database or Redis stops answering, the
// gateway says so once, at warn, with the cause (never a password), however many requests fail meanwhile,
// and once, at info, when it answers again. PostgreSQL is taken away by cutting a TCP proxy in front of it,
// Redis by killing a redis-server of the test's own, SQLite by another process holding its write lock.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openSqliteFile } from '../../src/storage/sqlite/driver.js';
import { postChat, waitFor, type Json } from '../support/e2e.js';
import { mockConfig, startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { startPgFaultProxy, type PgFaultProxy } from '../support/pg-fault-proxy.js';
import { freshPgSchema, postgresSkipReason, type PgSchema } from '../support/postgres.js';
import { redisServerSkipReason, startRedisServer, type ThrowawayRedis } from '../support/redis.js';
import { pool } from '../support/resilience.js';

const messages = [{ role: 'user', content: 'Hello' }];
// The sweeper's own failure line (one per interval) would join the outage's lines: not in these tests.
const QUIET_SWEEPER = 'billing:\n  sweep_interval_seconds: 3600\n';

interface LogLine {
  level: number;
  msg: string;
  dependency?: string;
  [field: string]: Json;
}

function lines(gw: GatewayProcess): LogLine[] {
  return gw.logs.flatMap((line) => {
    try {
      return [JSON.parse(line) as LogLine];
    } catch {
      return [];
    }
  });
}

/** Every line at warn or above that is not a request's access line (those are one per request by design). */
const alarms = (gw: GatewayProcess): LogLine[] => lines(gw).filter((l) => l.level >= 40 && l.msg !== 'request');
const aboutDependency = (gw: GatewayProcess, dependency: string, level: number): LogLine[] =>
  lines(gw).filter((l) => l.dependency === dependency && l.level === level);

async function waitForLine(gw: GatewayProcess, dependency: string, level: number, what: string): Promise<LogLine> {
  const found = await waitFor(() => aboutDependency(gw, dependency, level)[0], 20_000, 50);
  assert.ok(found, `${what}; the log:\n${gw.logs.join('\n')}`);
  return found;
}

describe('PostgreSQL becomes unreachable and comes back', { skip: await postgresSkipReason() }, () => {
  const PASSWORD = 'pg-password-never-logged-4711';
  let mock: MockUpstream;
  let schema: PgSchema;
  let proxy: PgFaultProxy;
  let gw: GatewayProcess;

  before(async () => {
    mock = await startMockUpstream();
    schema = await freshPgSchema();
    proxy = await startPgFaultProxy(schema.url);
    // The test server trusts local connections, so a password in the URL is accepted and ignored.
    const url = new URL(proxy.urlFor(schema.url));
    url.username ||= 'postgres';
    url.password = PASSWORD;
    gw = await startGateway({ config: mockConfig(mock, QUIET_SWEEPER), database: url.toString() });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
    await proxy?.close();
    await schema?.drop();
  });

  test('one warn line with the cause while requests fail, one info line when it answers again', { timeout: 60_000 }, async () => {
    const key = await gw.createKey({ balance: 5 });
    assert.equal((await postChat(gw, key.key, { model: 'gpt-test', messages })).status, 200);
    assert.deepEqual(aboutDependency(gw, 'database', 40), [], 'nothing to say while it answers');

    await proxy.takeDown();
    const during = await pool(20, 4, () => postChat(gw, key.key, { model: 'gpt-test', messages }));
    assert.deepEqual(new Set(during.map((res) => res.status)), new Set([503]), 'every request refused (fail closed)');
    const down = await waitForLine(gw, 'database', 40, 'a warn line names the database');
    assert.match(down.msg, /database unavailable/);
    assert.ok(typeof down.cause === 'string' && down.cause.length > 0, `a cause: ${JSON.stringify(down)}`);
    assert.match(`${down.code} ${down.cause}`, /ECONNREFUSED|terminated/i, 'the cause says what happened');
    assert.match(down.url, /^postgres(ql)?:\/\/\*\*\*@/, 'the URL, its credentials redacted');
    // More failures after the line: still that one line.
    await pool(10, 4, () => postChat(gw, key.key, { model: 'gpt-test', messages }));

    await proxy.bringBack();
    const answered = await waitFor(async () => (await postChat(gw, key.key, { model: 'gpt-test', messages })).status === 200, 20_000, 100);
    assert.ok(answered, 'requests succeed again');
    const back = await waitForLine(gw, 'database', 30, 'an info line says it answers again');
    assert.match(back.msg, /database answers again/);
    assert.ok(back.downMs >= 0);

    assert.equal(aboutDependency(gw, 'database', 40).length, 1, 'one warn line for the whole outage');
    assert.equal(aboutDependency(gw, 'database', 30).length, 1, 'one info line');
    assert.deepEqual(alarms(gw), [down], 'no other warning or error: not one line per failed request');
    assert.ok(!gw.logs.join('\n').includes(PASSWORD), 'the password appears nowhere');
  });
});

describe('Redis becomes unreachable and comes back', { skip: redisServerSkipReason() }, () => {
  let mock: MockUpstream;
  let redis: ThrowawayRedis;
  let gw: GatewayProcess;

  before(async () => {
    mock = await startMockUpstream();
    redis = await startRedisServer();
    gw = await startGateway({ config: mockConfig(mock, `${QUIET_SWEEPER}redis: ${redis.url}\n`) });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
    await redis?.stop();
  });

  test('one warn line with the cause while rate limits fail open, one info line when every connection is back', { timeout: 60_000 }, async () => {
    const limited = await gw.cli(['keys', 'create', '--name', 'limited', '--balance', '5', '--rpm', '1000', '--json']);
    const key = JSON.parse(limited.stdout) as { key: string };
    assert.equal((await postChat(gw, key.key, { model: 'gpt-test', messages })).status, 200);

    await redis.kill();
    const during = await pool(20, 4, () => postChat(gw, key.key, { model: 'gpt-test', messages }));
    assert.deepEqual(new Set(during.map((res) => res.status)), new Set([200]), 'requests keep flowing (fail open)');
    const down = await waitForLine(gw, 'redis', 40, 'a warn line names Redis');
    assert.match(down.msg, /Redis unreachable/);
    assert.match(down.msg, /rate limits fail open/);
    assert.equal(down.code, 'ECONNREFUSED', JSON.stringify(down));
    assert.match(down.cause, /ECONNREFUSED/);
    assert.equal(down.url, redis.url);
    await pool(10, 4, () => postChat(gw, key.key, { model: 'gpt-test', messages }));

    await redis.restart();
    const back = await waitForLine(gw, 'redis', 30, 'an info line says Redis answers again');
    assert.match(back.msg, /Redis answers again/);
    assert.equal((await postChat(gw, key.key, { model: 'gpt-test', messages })).status, 200);

    assert.equal(aboutDependency(gw, 'redis', 40).length, 1, 'one warn line, though three connections lost it');
    assert.equal(aboutDependency(gw, 'redis', 30).length, 1, 'one info line, once all three are back');
    assert.deepEqual(alarms(gw), [down], 'no other warning or error');
  });
});

describe('SQLite cannot take writes (another process holds its lock) and then can', () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;

  before(async () => {
    mock = await startMockUpstream();
    gw = await startGateway({ config: mockConfig(mock, QUIET_SWEEPER) });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
  });

  test('one warn line with SQLITE_BUSY while holds fail, one info line once a write commits again', { timeout: 60_000 }, async () => {
    const key = await gw.createKey({ balance: 5 });
    assert.equal((await postChat(gw, key.key, { model: 'gpt-test', messages })).status, 200);

    const other = openSqliteFile(gw.dbPath);
    try {
      other.exec('BEGIN IMMEDIATE');
      // Each waits the gateway's 1 s busy timeout, then is refused before any upstream call.
      for (let i = 0; i < 3; i++) assert.equal((await postChat(gw, key.key, { model: 'gpt-test', messages })).status, 503);
      const down = await waitForLine(gw, 'database', 40, 'a warn line names the database');
      assert.equal(down.code, 'SQLITE_BUSY');
      assert.match(down.cause, /locked/);
      assert.match(down.url, /^sqlite:/);
      other.exec('ROLLBACK');
    } finally {
      other.close();
    }

    assert.equal((await postChat(gw, key.key, { model: 'gpt-test', messages })).status, 200);
    const back = await waitForLine(gw, 'database', 30, 'an info line says it answers again');
    assert.match(back.msg, /database answers again/);
    assert.equal(aboutDependency(gw, 'database', 40).length, 1, 'one warn line for three refused holds');
    assert.equal(aboutDependency(gw, 'database', 30).length, 1);
    assert.equal(alarms(gw).length, 1, `no other warning or error: ${JSON.stringify(alarms(gw))}`);
  });
});
