// Signed webhooks end to end (docs/adr/0052-signed-webhooks.md): real gateway processes deliver the
// outbox to a local receiver that verifies every request with the standardwebhooks library. A revoke's
// key.revoked arrives signed; a receiver failing three times then answering gets the event with the same
// webhook-id, attempts recorded; a gateway SIGKILLed while the receiver holds the delivery open delivers
// it after a restart (nothing lost), and a SIGTERM releases a delivery in flight uncounted; an endpoint
// removed from the config is never contacted again; real spending below the threshold gives one
// balance.low per crossing; a cool-down and a recovery, an expiring key; the admin API and the CLI list
// and resend; two gateways on one PostgreSQL deliver each event once. Each test prints its figures.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { ADMIN_TOKEN, admin, adminOk, assertError, walkList } from '../support/admin.js';
import { parseJsonOutput, waitFor, type Json } from '../support/e2e.js';
import { mockConfig, readDatabase, startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { errorReply, startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { NO_COOLDOWN, resilienceConfig } from '../support/resilience.js';
import { freshPgSchema, postgresSkipReason } from '../support/postgres.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const verifier = new Webhook(SECRET);

interface Receipt {
  readonly path: string;
  readonly id: string;
  readonly type: string;
  readonly data: Json;
  readonly verified: boolean;
  readonly status: number;
}

/** A receiver: records every request (verifying its signature), answers as `respond` says. */
async function startReceiver() {
  const receipts: Receipt[] = [];
  const held: ServerResponse[] = [];
  let respond: (path: string, body: Json) => number | 'hold' = () => 200;
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk));
    request.on('end', () => {
      let verified = false;
      let payload: Json = {};
      try {
        payload = verifier.verify(body, request.headers as IncomingHttpHeaders & Record<string, string>) as Json;
        verified = true;
      } catch {
        payload = JSON.parse(body || '{}');
      }
      const answer = respond(request.url!, payload);
      receipts.push({ path: request.url!, id: String(request.headers['webhook-id']), type: payload.type, data: payload.data, verified, status: answer === 'hold' ? 0 : answer });
      if (answer === 'hold') held.push(response);
      else response.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    receipts,
    setRespond(fn: typeof respond) {
      respond = fn;
    },
    of: (id: string) => receipts.filter((r) => r.id === id),
    async close() {
      for (const response of held) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

function notificationsYaml(url: string, extra = ''): string {
  return `admin:
  token: \${TOLLGATE_ADMIN_TOKEN}
notifications:
  webhooks:
    - url: ${url}
      secret: \${HOOK_SECRET}
      events: ["*"]
  scan_interval_seconds: 0.3
  first_retry_seconds: 0.2
  max_retry_seconds: 1
  timeout_seconds: 2
${extra}`;
}

function config(mock: MockUpstream, url: string, extra = ''): string {
  return mockConfig(mock, notificationsYaml(url, extra));
}

const ENV = { TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN, HOOK_SECRET: SECRET };

async function newKey(gw: GatewayProcess, body: Json = {}): Promise<Json> {
  return adminOk(gw, 'POST', '/keys', { body: { name: 'hooked', balance: 1, ...body } });
}

/** The outbox event written for this key's revoke (the admin API's listing). */
async function revokedEventOf(gw: GatewayProcess, keyId: string): Promise<Json> {
  const events = await walkList(gw, '/webhooks/events?type=key.revoked', 100);
  const event = events.find((e) => e.data.key_id === keyId);
  assert.ok(event, `a key.revoked event for ${keyId}`);
  return event;
}

async function eventById(gw: GatewayProcess, id: number): Promise<Json> {
  return adminOk(gw, 'GET', `/webhooks/events/${id}`);
}

async function until<T>(what: string, check: () => T | Promise<T>, timeoutMs = 20_000): Promise<NonNullable<T>> {
  const value = await waitFor(check, timeoutMs, 50);
  assert.ok(value, what);
  return value as NonNullable<T>;
}

describe('webhooks (sqlite)', () => {
  let mock: MockUpstream;
  let hook: Receiver;
  let gw: GatewayProcess;
  before(async () => {
    mock = await startMockUpstream();
    hook = await startReceiver();
    gw = await startGateway({ config: config(mock, `${hook.base}/hook`), env: ENV });
  });
  after(async () => {
    if (gw) await stopGateway(gw, 10_000);
    await hook?.close();
    await mock?.close();
  });

  test('config check lists the endpoints and their events, never a signing secret', async () => {
    const [text, json] = await Promise.all([gw.cli(['config', 'check']), gw.cli(['config', 'check', '--json'])]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`webhooks: ${hook.base}/hook \\(every event\\)`));
    assert.deepEqual(parseJsonOutput<Json>(json, 'config check --json').webhooks, [{ url: `${hook.base}/hook`, events: '*' }]);
    const key = SECRET.slice('whsec_'.length);
    assert.ok(!text.stdout.includes(key) && !json.stdout.includes(key), 'no signing secret printed');
  });

  test('a revoke (the CLI) → key.revoked arrives signed, once, and is listed delivered', async (t) => {
    const key = await newKey(gw);
    const revoked = await gw.cli(['keys', 'revoke', key.id]);
    assert.equal(revoked.code, 0, revoked.stderr);
    const receipt = await until('key.revoked arrives', () => hook.receipts.find((r) => r.type === 'key.revoked' && r.data.key_id === key.id));
    assert.equal(receipt.verified, true);
    assert.equal(receipt.path, '/hook');
    assert.equal(receipt.data.account_id, key.account_id);
    const event = await until('listed delivered', async () => {
      const e = await revokedEventOf(gw, key.id);
      return e.status === 'delivered' && e;
    });
    assert.equal(event.message_id, receipt.id);
    assert.equal(event.attempts, 1);
    assert.deepEqual(event.delivered_to, [`${hook.base}/hook`]);
    assert.equal(hook.of(receipt.id).length, 1);
    t.diagnostic(`revoke: deliveries ${hook.of(receipt.id).length}, retries 0, duplicates 0`);
  });

  test('a receiver failing three times then answering: delivered with the same webhook-id, four attempts recorded', async (t) => {
    const key = await newKey(gw);
    let failures = 0;
    hook.setRespond((_path, body) => (body.data?.key_id === key.id && failures++ < 3 ? 500 : 200));
    try {
      await adminOk(gw, 'POST', `/keys/${key.id}/revoke`);
      const event = await until('delivered after three failures', async () => {
        const e = await revokedEventOf(gw, key.id);
        return e.status === 'delivered' && e;
      });
      const receipts = hook.of(event.message_id);
      assert.deepEqual(receipts.map((r) => r.status), [500, 500, 500, 200]);
      assert.ok(receipts.every((r) => r.verified && r.id === event.message_id));
      assert.equal(event.attempts, 4);
      assert.equal(event.last_error, null);
      t.diagnostic(`failing receiver: deliveries ${receipts.length}, retries 3, duplicates after success 0`);
    } finally {
      hook.setRespond(() => 200);
    }
  });

  test('balance.low through real spending: one per crossing; a top-up re-arms it and the next drop gives a second', async (t) => {
    const account = await adminOk(gw, 'POST', '/accounts', { body: { name: 'low', balance: 1 } });
    const key = await newKey(gw, { account_id: account.id, balance: undefined });
    const chat = async () => {
      const res = await fetch(`${gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hello' }], max_tokens: 20 }),
      });
      assert.equal(res.status, 200, await res.text());
    };
    const available = async () => (await adminOk(gw, 'GET', `/accounts/${account.id}`)).available as number;
    const notified = () => readDatabase(gw.dbPath, (db) => (db.prepare('SELECT balance_low_notified AS n FROM accounts WHERE id = ?').get(account.id) as { n: number }).n);
    await chat();
    const a1 = await available();
    const cost = Math.round((1 - a1) * 1e9) / 1e9;
    assert.ok(cost > 0);
    // The threshold half a request below what is left: the next request crosses it.
    const threshold = (a1 - cost / 2).toFixed(9);
    await adminOk(gw, 'PATCH', `/accounts/${account.id}`, { body: { metadata: { balance_low_usd: threshold } } });
    const lows = () => hook.receipts.filter((r) => r.type === 'balance.low' && r.data.account_id === account.id);
    await chat();
    await until('the first balance.low', () => lows().length === 1);
    assert.equal(lows()[0]!.verified, true);
    assert.equal(lows()[0]!.data.threshold_usd, Number(threshold));
    // Still below: more scans write nothing more.
    await until('the marker stays set', () => notified() === 1);
    await adminOk(gw, 'POST', `/accounts/${account.id}/topup`, { body: { amount: cost } });
    await until('re-armed once above the threshold', () => notified() === 0);
    assert.equal(lows().length, 1);
    await chat();
    await until('the second balance.low', () => lows().length === 2);
    assert.ok(lows()[1]!.data.available_usd < Number(threshold));
    const events = await walkList(gw, '/webhooks/events?type=balance.low', 100);
    assert.equal(events.filter((e) => e.data.account_id === account.id).length, 2);
    t.diagnostic(`balance.low: 3 requests, 1 top-up, events ${lows().length}`);
  });

  test('admin API and CLI: list by type and status with cursors, resend (Idempotency-Key) with the same webhook-id; bad input changes nothing', async () => {
    const key = await newKey(gw);
    await adminOk(gw, 'POST', `/keys/${key.id}/revoke`);
    const event = await until('delivered', async () => {
      const e = await revokedEventOf(gw, key.id);
      return e.status === 'delivered' && e;
    });
    const all = await walkList(gw, '/webhooks/events', 2);
    assert.ok(all.length >= 4);
    assert.deepEqual(all.map((e) => e.id), [...all.map((e) => e.id)].sort((a, b) => b - a), 'newest first');
    assert.ok((await walkList(gw, '/webhooks/events?status=delivered', 3)).every((e) => e.status === 'delivered'));
    assertError(await admin(gw, 'GET', '/webhooks/events?type=key.deleted'), 400, 'invalid_request');
    assertError(await admin(gw, 'GET', '/webhooks/events?status=lost'), 400, 'invalid_request');
    assertError(await admin(gw, 'GET', '/webhooks/events?after=nonsense'), 400, 'invalid_request');
    assertError(await admin(gw, 'POST', '/webhooks/events/999999/resend', { headers: { 'idempotency-key': 'resend-missing' } }), 404, 'webhook_event_not_found');
    assertError(await admin(gw, 'POST', '/webhooks/events/abc/resend'), 404, 'webhook_event_not_found');

    const before = hook.of(event.message_id).length;
    const resend = () => admin(gw, 'POST', `/webhooks/events/${event.id}/resend`, { headers: { 'idempotency-key': `resend-${event.id}` } });
    const first = await resend();
    assert.equal(first.status, 200, first.text);
    assert.equal(first.json.message_id, event.message_id);
    const replay = await resend();
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.json.message_id, event.message_id);
    await until('resent once', async () => (await eventById(gw, event.id)).status === 'delivered' && hook.of(event.message_id).length === before + 1);

    const listed = parseJsonOutput(await gw.cli(['webhooks', 'list', '--type', 'key.revoked', '--json']), 'webhooks list');
    assert.ok(listed.some((e: Json) => e.id === event.id && e.status === 'delivered'));
    const table = await gw.cli(['webhooks', 'list', '--limit', '3']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^ID\s+TYPE\s+CREATED\s+STATUS\s+ATTEMPTS\s+LAST ERROR/);
    const cliResend = await gw.cli(['webhooks', 'resend', String(event.id)]);
    assert.equal(cliResend.code, 0, cliResend.stderr);
    await until('resent by the CLI', () => hook.of(event.message_id).length === before + 2);
    const missing = await gw.cli(['webhooks', 'resend', '999999']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /No webhook event with id 999999/);
    assert.ok(hook.of(event.message_id).every((r) => r.verified));
  });

  test('metrics: deliveries by outcome and the outbox pending count', async () => {
    const text = await (await fetch(`${gw.origin}/metrics`)).text();
    assert.match(text, /tollgate_webhook_deliveries_total\{outcome="ok"\} [1-9]/);
    assert.match(text, /tollgate_webhook_deliveries_total\{outcome="failed"\} [1-9]/);
    assert.match(text, /tollgate_webhook_outbox_pending \d+/);
  });

  test('only the configured URL was ever contacted, and every request carried a valid signature', () => {
    assert.ok(hook.receipts.length > 0);
    assert.deepEqual([...new Set(hook.receipts.map((r) => r.path))], ['/hook']);
    assert.ok(hook.receipts.every((r) => r.verified));
  });
});

describe('webhooks for upstreams and expiring keys (sqlite)', () => {
  let a: MockUpstream;
  let b: MockUpstream;
  let hook: Receiver;
  let gw: GatewayProcess;
  before(async () => {
    [a, b] = await Promise.all([startMockUpstream(), startMockUpstream()]);
    hook = await startReceiver();
    const gateway = resilienceConfig({
      providers: { a: { url: a.url, extra: ['retries: 0', 'cooldown: { failures: 2, seconds: 1 }'] }, b: { url: b.url, extra: [NO_COOLDOWN] } },
      models: { 'ab-model': { upstreams: [{ provider: 'a' }, { provider: 'b' }] } },
    });
    gw = await startGateway({ config: gateway + notificationsYaml(`${hook.base}/ops`), env: ENV });
  });
  after(async () => {
    if (gw) await stopGateway(gw, 10_000);
    await hook?.close();
    await Promise.all([a, b].map((m) => m?.close()));
  });

  test('an upstream failing into a cool-down → upstream.cooling; answering again after it → upstream.recovered', async () => {
    const key = await newKey(gw, { balance: 5 });
    const chat = async () => {
      const res = await fetch(`${gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'ab-model', messages: [{ role: 'user', content: 'hello' }], max_tokens: 20 }),
      });
      assert.equal(res.status, 200, await res.text());
    };
    a.handle(errorReply(500, 'A is down'));
    await chat();
    await chat();
    const cooling = await until('upstream.cooling', () => hook.receipts.find((r) => r.type === 'upstream.cooling'));
    assert.equal(cooling.verified, true);
    assert.deepEqual([cooling.data.provider, cooling.data.upstream_model, cooling.data.last_error.status], ['a', 'gpt-4o-mini', 500]);
    a.handle(null);
    // A is tried again once its one-second cool-down is over; its first answer is the recovery.
    const recovered = await until('upstream.recovered', async () => {
      await chat();
      return hook.receipts.find((r) => r.type === 'upstream.recovered');
    }, 20_000);
    assert.deepEqual(recovered.data, { provider: 'a', upstream_model: 'gpt-4o-mini' });
    assert.equal(hook.receipts.filter((r) => r.type === 'upstream.cooling').length, 1);
  });

  test('a key expiring in three days → key.expiring 7 days ahead, once', async () => {
    const expiresAt = new Date(Date.now() + 3 * 86_400_000).toISOString();
    const key = await newKey(gw, { expires_at: expiresAt });
    const expiring = () => hook.receipts.filter((r) => r.type === 'key.expiring' && r.data.key_id === key.id);
    await until('key.expiring', () => expiring().length === 1);
    assert.equal(expiring()[0]!.data.days_ahead, 7);
    assert.equal(Date.parse(expiring()[0]!.data.expires_at), Date.parse(expiresAt));
    // Later scans (every 0.3 s) write no second notice.
    await until('scanned again', async () => (await walkList(gw, '/webhooks/events?type=key.expiring', 100)).every((e) => e.status === 'delivered'));
    assert.equal((await walkList(gw, '/webhooks/events?type=key.expiring', 100)).filter((e) => e.data.key_id === key.id).length, 1);
    assert.equal(expiring().length, 1);
  });
});

describe('webhooks across a crash and a config change (sqlite)', () => {
  let mock: MockUpstream;
  let hook: Receiver;
  let gw: GatewayProcess | undefined;
  before(async () => {
    mock = await startMockUpstream();
    hook = await startReceiver();
  });
  after(async () => {
    if (gw) await stopGateway(gw, 10_000);
    await hook?.close();
    await mock?.close();
  });

  test('kill -9 while the receiver holds the delivery open: delivered after the restart, nothing lost', async (t) => {
    hook.setRespond(() => 'hold');
    gw = await startGateway({ config: config(mock, `${hook.base}/hold`), env: ENV });
    const dir = gw.dir;
    const key = await newKey(gw);
    await adminOk(gw, 'POST', `/keys/${key.id}/revoke`);
    const held = await until('the delivery is in flight', () => hook.receipts.find((r) => r.data?.key_id === key.id));
    assert.equal(await gw.stop('SIGKILL'), null);
    hook.setRespond(() => 200);
    gw = await startGateway({ config: config(mock, `${hook.base}/hold`), env: ENV, dir });
    // The dead process's lease lapses (timeout 2 s + 5 s), then the restarted gateway delivers.
    await until('delivered after the restart', () => hook.of(held.id).some((r) => r.status === 200), 30_000);
    const event = await until('recorded delivered', async () => {
      const e = await revokedEventOf(gw!, key.id);
      return e.status === 'delivered' && e;
    });
    const receipts = hook.of(held.id);
    assert.equal(event.message_id, held.id);
    assert.ok(receipts.every((r) => r.verified));
    assert.deepEqual(receipts.map((r) => r.status), [0, 200]);
    t.diagnostic(`kill -9: deliveries ${receipts.length} (1 cut by the kill, 1 answered), duplicates seen by the receiver ${receipts.length - 1}, lost 0`);
  });

  test('graceful shutdown cuts a delivery in flight and releases it uncounted; the restarted gateway delivers it', async () => {
    hook.setRespond(() => 'hold');
    await stopGateway(gw!, 10_000).catch(() => undefined);
    gw = await startGateway({ config: config(mock, `${hook.base}/hold`), env: ENV });
    const dir = gw.dir;
    const key = await newKey(gw);
    await adminOk(gw, 'POST', `/keys/${key.id}/revoke`);
    const held = await until('the delivery is in flight', () => hook.receipts.find((r) => r.data?.key_id === key.id));
    assert.equal(await gw.stop('SIGTERM'), 0);
    const row = readDatabase(gw.dbPath, (db) =>
      db.prepare('SELECT status, attempts, lease_owner FROM webhook_outbox WHERE message_id = ?').get(held.id),
    ) as { status: string; attempts: number; lease_owner: string | null };
    assert.deepEqual(row, { status: 'pending', attempts: 0, lease_owner: null });
    hook.setRespond(() => 200);
    gw = await startGateway({ config: config(mock, `${hook.base}/hold`), env: ENV, dir });
    await until('delivered after the restart', () => hook.of(held.id).some((r) => r.status === 200));
    const event = await until('recorded delivered', async () => {
      const e = await revokedEventOf(gw!, key.id);
      return e.status === 'delivered' && e;
    });
    assert.equal(event.attempts, 1);
  });

  test('an endpoint removed from the config is never contacted again: its pending event goes to the configured one', async () => {
    hook.setRespond((path) => (path === '/old' ? 500 : 200));
    await stopGateway(gw!, 10_000).catch(() => undefined);
    gw = await startGateway({ config: config(mock, `${hook.base}/old`), env: ENV });
    const dir = gw.dir;
    const key = await newKey(gw);
    await adminOk(gw, 'POST', `/keys/${key.id}/revoke`);
    const first = await until('a failed attempt at /old', () => hook.receipts.find((r) => r.path === '/old' && r.data?.key_id === key.id));
    assert.equal(await gw.stop('SIGTERM'), 0);
    const oldCount = hook.receipts.filter((r) => r.path === '/old').length;
    gw = await startGateway({ config: config(mock, `${hook.base}/new`), env: ENV, dir });
    await until('delivered to /new', () => hook.of(first.id).some((r) => r.path === '/new' && r.status === 200));
    await until('recorded delivered', async () => (await revokedEventOf(gw!, key.id)).status === 'delivered');
    assert.equal(hook.receipts.filter((r) => r.path === '/old').length, oldCount, 'nothing more to /old');
    assert.deepEqual([...new Set(hook.receipts.map((r) => r.path))].sort(), ['/hold', '/new', '/old']);
  });
});

describe('two gateways on one PostgreSQL', { skip: await postgresSkipReason() }, () => {
  let mock: MockUpstream;
  let hook: Receiver;
  const gateways: GatewayProcess[] = [];
  let drop: (() => Promise<void>) | undefined;
  before(async () => {
    mock = await startMockUpstream();
    hook = await startReceiver();
    const schema = await freshPgSchema();
    drop = () => schema.drop();
    for (let i = 0; i < 2; i++) gateways.push(await startGateway({ config: config(mock, `${hook.base}/pg`), env: ENV, database: schema.url }));
  });
  after(async () => {
    for (const gw of gateways) await stopGateway(gw, 10_000);
    await drop?.();
    await hook?.close();
    await mock?.close();
  });

  test('each event is delivered once in the normal case', async (t) => {
    const keys: Json[] = [];
    for (let i = 0; i < 30; i++) keys.push(await newKey(gateways[i % 2]!));
    await Promise.all(keys.map((key, i) => adminOk(gateways[i % 2]!, 'POST', `/keys/${key.id}/revoke`)));
    const ids = new Set(keys.map((k) => k.id));
    const received = () => hook.receipts.filter((r) => r.type === 'key.revoked' && ids.has(r.data.key_id));
    await until('every key.revoked delivered', () => new Set(received().map((r) => r.id)).size === keys.length, 30_000);
    await until('all recorded delivered', async () => (await walkList(gateways[0]!, '/webhooks/events?status=pending', 100)).length === 0);
    const perId = new Map<string, number>();
    for (const r of received()) perId.set(r.id, (perId.get(r.id) ?? 0) + 1);
    const duplicates = [...perId.values()].reduce((sum, n) => sum + n - 1, 0);
    assert.equal(duplicates, 0);
    assert.ok(received().every((r) => r.verified && r.path === '/pg'));
    t.diagnostic(`two gateways: events ${keys.length}, deliveries ${received().length}, duplicates ${duplicates}`);
  });
});
