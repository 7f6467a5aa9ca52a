// Signed webhooks' parts without a database or a gateway process (docs/adr/0052-signed-webhooks.md):
// signatures the standardwebhooks library verifies, the back-off schedule, which endpoints an event goes
// to, the config's notifications section, and the deliverer against a local receiver and an in-memory
// outbox (a 2xx marks delivered, a failure schedules a retry with the same webhook-id, an endpoint no
// longer configured is never contacted).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { ConfigError, parseConfig } from '../../../src/config/load.js';
import type { NotificationsConfig } from '../../../src/config/types.js';
import { nextAttemptAt } from '../../../src/notifications/backoff.js';
import { WebhookDeliverer } from '../../../src/notifications/deliverer.js';
import { NotificationScanner } from '../../../src/notifications/scanner.js';
import { targetsOf, wants } from '../../../src/notifications/endpoints.js';
import { signDelivery } from '../../../src/notifications/signing.js';
import type { WebhookAttemptResult, WebhookClaim, WebhookEventRecord, WebhookStore } from '../../../src/storage/types.js';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const OTHER = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const T0 = 1_750_000_000_000;

function record(overrides: Partial<WebhookEventRecord> = {}): WebhookEventRecord {
  return {
    id: 1, messageId: 'msg_1', type: 'key.revoked', data: { key_id: 'key_a' }, createdAt: T0, status: 'pending', attempts: 0, nextAttemptAt: T0,
    retryFrom: T0, deliveredTo: [], lastError: null, lastAttemptAt: null, deliveredAt: null, ...overrides,
  };
}

describe('signing', () => {
  test("the library's verify() accepts what Tollgate signs and returns the payload {type, timestamp, data}", () => {
    const now = Date.now();
    const { body, headers } = signDelivery(SECRET, record(), now);
    assert.equal(headers['webhook-id'], 'msg_1');
    assert.equal(headers['webhook-timestamp'], String(Math.floor(now / 1000)));
    assert.match(headers['webhook-signature']!, /^v1,[A-Za-z0-9+/]+=*$/);
    assert.deepEqual(new Webhook(SECRET).verify(body, { ...headers }), { type: 'key.revoked', timestamp: new Date(T0).toISOString(), data: { key_id: 'key_a' } });
  });

  test('another secret, a changed body or a changed id fails verification', () => {
    const { body, headers } = signDelivery(SECRET, record(), Date.now());
    assert.throws(() => new Webhook(OTHER).verify(body, { ...headers }), WebhookVerificationError);
    assert.throws(() => new Webhook(SECRET).verify(body.replace('key_a', 'key_b'), { ...headers }), WebhookVerificationError);
    assert.throws(() => new Webhook(SECRET).verify(body, { ...headers, 'webhook-id': 'msg_2' }), WebhookVerificationError);
  });
});

describe('back-off', () => {
  const options = { firstRetryMs: 5_000, maxRetryMs: 3_600_000, giveUpMs: 24 * 3_600_000 };
  test('doubles from the first retry, at most the maximum, and gives up 24 h after the event was written', () => {
    assert.deepEqual([1, 2, 3, 4, 5].map((n) => nextAttemptAt(n, T0, T0, options)! - T0), [5_000, 10_000, 20_000, 40_000, 80_000]);
    assert.equal(nextAttemptAt(20, T0, T0, options)! - T0, 3_600_000);
    assert.equal(nextAttemptAt(1_000, T0, T0, options)! - T0, 3_600_000);
    // One last try at the deadline, then none.
    assert.equal(nextAttemptAt(30, T0, T0 + options.giveUpMs - 1_000, options), T0 + options.giveUpMs);
    assert.equal(nextAttemptAt(31, T0, T0 + options.giveUpMs, options), undefined);
  });

  test('the whole schedule over 24 h: about thirty attempts', () => {
    let at = T0;
    let attempts = 0;
    for (;;) {
      attempts++;
      const next = nextAttemptAt(attempts, T0, at, options);
      if (next === undefined) break;
      at = next;
    }
    assert.equal(at, T0 + options.giveUpMs);
    assert.ok(attempts > 20 && attempts < 40, `${attempts} attempts`);
  });
});

describe('event filtering per endpoint', () => {
  const all = { url: 'http://a/', secret: SECRET, events: '*' as const };
  const money = { url: 'http://b/', secret: SECRET, events: ['payment.succeeded', 'payment.refunded'] };
  test('an endpoint gets the events it lists, or all with *', () => {
    assert.equal(wants(all, 'upstream.cooling'), true);
    assert.equal(wants(money, 'payment.refunded'), true);
    assert.equal(wants(money, 'key.revoked'), false);
  });
  test('the targets are the configured endpoints that want it and have not answered it yet', () => {
    assert.deepEqual(targetsOf([all, money], record({ type: 'payment.succeeded' })).map((e) => e.url), ['http://a/', 'http://b/']);
    assert.deepEqual(targetsOf([all, money], record({ type: 'payment.succeeded', deliveredTo: ['http://a/'] })).map((e) => e.url), ['http://b/']);
    assert.deepEqual(targetsOf([all, money], record({ type: 'key.revoked' })).map((e) => e.url), ['http://a/']);
    assert.deepEqual(targetsOf([money], record({ type: 'key.revoked' })), []);
  });
});

describe('notifications config', () => {
  const BASE = 'providers: {}\nmodels: {}\n';
  test('defaults: no endpoints, no threshold, 60 s scans, 5 s first retry, 24 h, kept 30 days', () => {
    const config = parseConfig(BASE, '/etc/tollgate.yaml', {});
    assert.deepEqual(config.notifications, {
      webhooks: [],
      balanceLow: null,
      scanIntervalMs: 60_000,
      timeoutMs: 10_000,
      firstRetryMs: 5_000,
      maxRetryMs: 3_600_000,
      giveUpMs: 86_400_000,
      keepMs: 30 * 86_400_000,
    });
    assert.equal(parseConfig(`${BASE}notifications:\n  keep_days: 7\n`, '/etc/tollgate.yaml', {}).notifications.keepMs, 7 * 86_400_000);
    assert.throws(() => parseConfig(`${BASE}notifications:\n  keep_days: 0\n`, '/etc/tollgate.yaml', {}), /keep_days/);
  });

  test('an endpoint with its secret from the environment, and a threshold', () => {
    const yaml = `${BASE}notifications:\n  balance_low_usd: "2.5"\n  webhooks:\n    - url: https://ops.example.com/hook\n      secret: \${HOOK_SECRET}\n      events: [key.revoked, balance.low]\n`;
    const config = parseConfig(yaml, '/etc/tollgate.yaml', { HOOK_SECRET: SECRET });
    assert.deepEqual(config.notifications.webhooks, [{ url: 'https://ops.example.com/hook', secret: SECRET, events: ['key.revoked', 'balance.low'] }]);
    assert.equal(config.notifications.balanceLow, 2_500_000_000);
  });

  test('a bad secret, an unknown event, a non-http URL and a repeated URL are refused by name, the secret never echoed', () => {
    const yaml = `${BASE}notifications:\n  webhooks:\n    - { url: "https://a.example/h", secret: "not-a-secret-value", events: ["*"] }\n    - { url: "https://a.example/h", secret: "${SECRET}", events: ["*"] }\n`;
    assert.throws(() => parseConfig(yaml, '/etc/tollgate.yaml', {}), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /notifications\.webhooks\[0\]\.secret: must be whsec_/);
      assert.match(error.message, /notifications\.webhooks\[1\]\.url: .* configured twice/);
      assert.doesNotMatch(error.message, /not-a-secret-value/);
      return true;
    });
    assert.throws(() => parseConfig(`${BASE}notifications:\n  webhooks: [{ url: "https://a.example/h", secret: "${SECRET}", events: [key.deleted] }]\n`, '/x.yaml', {}), /notifications\.webhooks/);
    assert.throws(() => parseConfig(`${BASE}notifications:\n  webhooks: [{ url: "ftp://a.example/h", secret: "${SECRET}", events: ["*"] }]\n`, '/x.yaml', {}), /notifications\.webhooks/);
    assert.throws(() => parseConfig(`${BASE}notifications:\n  balance_low_usd: "1.0000000001"\n`, '/x.yaml', {}), /notifications\.balance_low_usd/);
  });
});

/** An outbox in memory: enough of the store for the deliverer. */
class MemoryOutbox implements Pick<WebhookStore, 'claim' | 'complete'> {
  readonly results: WebhookAttemptResult[] = [];
  constructor(public rows: WebhookEventRecord[]) {}
  async claim(claim: WebhookClaim): Promise<WebhookEventRecord[]> {
    const due = this.rows.filter((r) => r.status === 'pending' && r.nextAttemptAt <= claim.now);
    this.rows = this.rows.filter((r) => !due.includes(r));
    return due;
  }
  async complete(id: number, _owner: string, result: WebhookAttemptResult): Promise<boolean> {
    this.results.push(result);
    return true;
  }
}

async function receiver(statuses: number[]) {
  const seen: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk));
    request.on('end', () => {
      seen.push({ url: request.url!, headers: request.headers, body });
      response.writeHead(statuses.shift() ?? 200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { seen, base, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

function notifications(webhooks: NotificationsConfig['webhooks']): NotificationsConfig {
  return { webhooks, balanceLow: null, scanIntervalMs: 60_000, timeoutMs: 2_000, firstRetryMs: 5_000, maxRetryMs: 3_600_000, giveUpMs: 86_400_000, keepMs: 30 * 86_400_000 };
}

describe('the deliverer', () => {
  const log = pino({ level: 'silent' });

  test('a 2xx marks delivered; the receiver verifies the signature with the library', async () => {
    const hook = await receiver([204]);
    try {
      const outbox = new MemoryOutbox([record()]);
      const counts = { ok: 0, failed: 0 };
      const deliverer = new WebhookDeliverer(outbox as unknown as WebhookStore, notifications([{ url: `${hook.base}/a`, secret: SECRET, events: '*' }]), log, { delivery: (o) => counts[o]++ });
      assert.equal(await deliverer.runOnce(), 1);
      await deliverer.stop();
      assert.deepEqual(outbox.results, [{ outcome: 'delivered', deliveredTo: [`${hook.base}/a`] }]);
      assert.deepEqual(counts, { ok: 1, failed: 0 });
      const [got] = hook.seen;
      assert.equal(got!.headers['webhook-id'], 'msg_1');
      assert.deepEqual(new Webhook(SECRET).verify(got!.body, got!.headers as Record<string, string>), { type: 'key.revoked', timestamp: new Date(T0).toISOString(), data: { key_id: 'key_a' } });
    } finally {
      await hook.close();
    }
  });

  test('a failure schedules a retry after the back-off, remembering the endpoint that answered', async () => {
    const hook = await receiver([200, 500]);
    try {
      const outbox = new MemoryOutbox([record({ attempts: 2 })]);
      const now = T0 + 1_000;
      const endpoints = [{ url: `${hook.base}/ok`, secret: SECRET, events: '*' as const }, { url: `${hook.base}/bad`, secret: OTHER, events: '*' as const }];
      const deliverer = new WebhookDeliverer(outbox as unknown as WebhookStore, notifications(endpoints), log, undefined, () => now);
      await deliverer.runOnce();
      await deliverer.stop();
      const result = outbox.results[0]!;
      assert.equal(result.outcome, 'retry');
      if (result.outcome !== 'retry') return;
      assert.deepEqual(result.deliveredTo, [`${hook.base}/ok`]);
      assert.equal(result.nextAttemptAt, now + 20_000); // the third failed attempt: 5 s × 2²
      assert.match(result.error, /\/bad: HTTP 500/);
    } finally {
      await hook.close();
    }
  });

  test('an event no configured endpoint wants is skipped, and nothing is contacted', async () => {
    const hook = await receiver([]);
    try {
      const outbox = new MemoryOutbox([record({ type: 'upstream.cooling' })]);
      const deliverer = new WebhookDeliverer(outbox as unknown as WebhookStore, notifications([{ url: `${hook.base}/money`, secret: SECRET, events: ['payment.succeeded'] }]), log);
      await deliverer.runOnce();
      await deliverer.stop();
      assert.deepEqual(outbox.results, [{ outcome: 'skipped', deliveredTo: [] }]);
      assert.equal(hook.seen.length, 0);
    } finally {
      await hook.close();
    }
  });

  test('past the give-up time a failure marks the event failed', async () => {
    const outbox = new MemoryOutbox([record({ attempts: 30 })]);
    const now = T0 + 86_400_000;
    // Nothing listens on port 9 of 127.0.0.1: a connection refused.
    const deliverer = new WebhookDeliverer(outbox as unknown as WebhookStore, notifications([{ url: 'http://127.0.0.1:9/', secret: SECRET, events: '*' }]), log, undefined, () => now);
    await deliverer.runOnce();
    await deliverer.stop();
    assert.equal(outbox.results[0]!.outcome, 'failed');
  });
});

describe('the notification scanner', () => {
  test('each scan also deletes settled events past keep_days, in one bounded batch', async () => {
    const calls: string[] = [];
    const store = {
      scan: async (scan: { now: number }) => (calls.push(`scan ${scan.now}`), 0),
      prune: async (before: number, limit: number) => (calls.push(`prune ${before} ${limit}`), 3),
    } as unknown as WebhookStore;
    const now = 1_800_000_000_000;
    const config = { notifications: { ...notifications([]), scanIntervalMs: 3_600_000, keepMs: 7 * 86_400_000 }, limits: { budget: null, budgetPeriod: 'month' } };
    const scanner = new NotificationScanner(store, config as never, pino({ level: 'silent' }), () => now);
    scanner.start();
    await scanner.stop();
    assert.deepEqual(calls, [`scan ${now}`, `prune ${now - 7 * 86_400_000} 1000`]);
  });
});
