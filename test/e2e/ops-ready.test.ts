// GET /ready (product.md §10): 200 while the database answers and the gateway takes work; 503 when the
// database is unreachable (PostgreSQL behind a TCP relay the test cuts) and during shutdown (SIGTERM
// with a stream in flight); /health stays 200 while the process is up.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { call } from '../support/e2e.js';
import { mockConfig, startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { sseFromChunks, chatChunks, makeUsage, slowDrip, startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { freshPgSchema, postgresSkipReason, TEST_PG_URL, type PgSchema } from '../support/postgres.js';
import { exitOf, sleep } from '../support/resilience.js';

/** A TCP relay to PostgreSQL that the test can cut (every connection reset, new ones refused) and restore. */
class Relay {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;
  /** Accept connections but relay nothing: a database that hangs instead of refusing. */
  blackhole = false;

  constructor(private readonly target: { host: string; port: number }) {}

  async open(): Promise<void> {
    this.server = net.createServer((client) => {
      if (this.blackhole) {
        this.sockets.add(client);
        client.on('close', () => this.sockets.delete(client));
        client.on('error', () => undefined);
        return;
      }
      const upstream = net.connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  async cut(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server!.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }
}

const readyOf = async (gw: GatewayProcess) => {
  const res = await call(gw, 'GET', '//ready');
  return { status: res.status, body: res.json };
};

describe('GET /ready on SQLite', () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;
  before(async () => {
    mock = await startMockUpstream();
    gw = await startGateway({ config: mockConfig(mock) });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
  });

  test('200 {"status":"ready"} while the database answers; never cached; /health stays as it was', async () => {
    const res = await call(gw, 'GET', '//ready');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { status: 'ready' });
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const health = await call(gw, 'GET', '//health');
    assert.equal(health.status, 200);
    assert.deepEqual(health.json, { status: 'ok' });
  });

  test('503 once SIGTERM arrived, while a stream is still in flight (on a connection that was already open)', async () => {
    const key = await gw.createKey({ balance: 5 });
    mock.handle(slowDrip(150, sseFromChunks(chatChunks({ content: ['a ', 'b ', 'c ', 'd ', 'e ', 'f ', 'g ', 'h'], usage: makeUsage(11, 8) }))));
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }], stream: true }),
    });
    assert.equal(res.status, 200);
    const streamed = res.text();
    // A probe whose headers are not finished yet: the server counts its connection busy, so it stays open.
    const url = new URL(gw.origin);
    const probe = net.connect(Number(url.port), url.hostname);
    await new Promise<void>((resolve, reject) => probe.once('connect', resolve).once('error', reject));
    let answer = '';
    probe.on('data', (d: Buffer) => (answer += d.toString()));
    probe.on('error', () => undefined);
    probe.write(`GET /ready HTTP/1.1\r\nHost: ${url.host}\r\n`);
    assert.equal((await readyOf(gw)).status, 200, 'ready before SIGTERM');

    const exited = exitOf(gw.child);
    gw.child.kill('SIGTERM');
    await sleep(300);
    probe.write('\r\n');
    for (let i = 0; i < 200 && !/\r\n\r\n[\s\S]*\}/.test(answer); i++) await sleep(25);
    probe.destroy();
    assert.match(answer, /^HTTP\/1\.1 503 /, answer.slice(0, 200));
    assert.match(answer, /"code":"shutting_down"/);
    // The stream in flight still completes, and the process exits cleanly.
    assert.match(await streamed, /data: \[DONE\]/);
    assert.deepEqual(await exited, [0, null]);
  });
});

describe('GET /ready on PostgreSQL', { skip: await postgresSkipReason() }, () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;
  let schema: PgSchema;
  let relay: Relay;
  before(async () => {
    mock = await startMockUpstream();
    schema = await freshPgSchema();
    const target = new URL(TEST_PG_URL);
    relay = new Relay({ host: target.hostname, port: Number(target.port || 5432) });
    await relay.open();
    const url = new URL(schema.url);
    url.host = `127.0.0.1:${relay.port}`;
    gw = await startGateway({ config: mockConfig(mock), database: url.toString() });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
    await relay?.cut().catch(() => undefined);
    await schema?.drop();
  });

  test('503 database_unavailable while the database refuses or hangs, 200 again once it can; /health stays 200', async () => {
    assert.deepEqual(await readyOf(gw), { status: 200, body: { status: 'ready' } });
    await relay.cut();
    assert.deepEqual(await readyOf(gw), { status: 503, body: { status: 'not_ready', reason: 'database_unavailable' } });
    assert.equal((await call(gw, 'GET', '//health')).status, 200, 'the process is up');
    // Metrics still answer (the holds gauges keep their last value), so an outage can be watched.
    assert.equal((await call(gw, 'GET', '//metrics')).status, 200);
    // A database that accepts connections and never answers: /ready still answers, 503, within its deadline.
    relay.blackhole = true;
    await relay.open();
    assert.deepEqual(await readyOf(gw), { status: 503, body: { status: 'not_ready', reason: 'database_unavailable' } });
    await relay.cut();
    relay.blackhole = false;
    await relay.open();
    let ready = await readyOf(gw);
    for (let i = 0; i < 100 && ready.status !== 200; i++) {
      await sleep(50);
      ready = await readyOf(gw);
    }
    assert.deepEqual(ready, { status: 200, body: { status: 'ready' } });
  });
});
