// `tollgate audit` (product.md §13): a database the gateway wrote is clean (exit 0); each corruption
// injected by SQL — a cached balance off by 1, a hold with two ends, a capture without its usage row, an
// expired hold left active — is a violation that names its check, key and request (exit 1). The same
// checks on PostgreSQL through the store.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteFile } from '../../src/storage/sqlite/driver.js';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { parseJsonOutput, postChat, startE2E, stopE2E, type E2E, type Json } from '../support/e2e.js';
import { errorReply } from '../support/mock-upstream.js';
import { freshPgSchema, postgresSkipReason } from '../support/postgres.js';
import { admin, adminOk, assertError, chatOnce, startAdminE2E, type AdminE2E } from '../support/admin.js';

function writeDb(path: string, sql: string, ...params: unknown[]): void {
  const db = openSqliteFile(path);
  try {
    db.prepare(sql).run(...params);
  } finally {
    db.close();
  }
}

describe('tollgate audit', () => {
  let e: E2E;
  /** A key with settled chat, stream and failed requests: [key id, a captured request id]. */
  const served: Array<{ keyId: string; requestId: string }> = [];

  before(async () => {
    e = await startE2E();
    for (let i = 0; i < 4; i++) {
      const key = await e.gw.createKey({ name: `audit-${i}`, balance: 1 });
      const ok = await postChat(e.gw, key.key, { model: 'gpt-test', max_tokens: 20, messages: [{ role: 'user', content: `hello ${i}` }] });
      assert.equal(ok.status, 200);
      await postChat(e.gw, key.key, { model: 'gpt-test', stream: true, max_tokens: 20, messages: [{ role: 'user', content: 'stream' }] });
      e.mock.handle(errorReply(400, 'bad'));
      await postChat(e.gw, key.key, { model: 'gpt-test', max_tokens: 20, messages: [{ role: 'user', content: 'fails' }] });
      e.mock.handle(null);
      served.push({ keyId: key.id, requestId: ok.headers.get('x-request-id')! });
    }
  });

  after(() => stopE2E(e));

  const audit = async (...args: string[]) => e.gw.cli(['audit', ...args]);

  test('a database the gateway wrote has no violations: exit 0', async () => {
    const text = await audit();
    assert.equal(text.code, 0, text.stderr + text.stdout);
    assert.match(text.stdout, /no violations/);
    const json = parseJsonOutput<Json>(await audit('--json'), 'audit --json');
    assert.deepEqual(json, { ok: true, violations: [] });
  });

  test('a cached balance off by 1 is named, exit 1', async () => {
    const { keyId } = served[0]!;
    // The money is the key's (personal) account's.
    writeDb(e.gw.dbPath, 'UPDATE accounts SET balance = balance + 1 WHERE id = (SELECT account_id FROM api_keys WHERE id = ?)', keyId);
    const res = await audit('--key', keyId);
    assert.equal(res.code, 1);
    assert.match(res.stdout, new RegExp(`VIOLATION account_cached_balance account=acct_\\w+: cached balance \\d+ != \\d+ derived`));
  });

  test('a hold with two ends is named with its request, exit 1', async () => {
    const { keyId, requestId } = served[1]!;
    writeDb(
      e.gw.dbPath,
      "INSERT INTO ledger_entries (account_id, key_id, request_id, kind, amount, created_at, seq) SELECT k.account_id, h.key_id, h.request_id, 'release', h.amount, 0, 99 FROM holds h JOIN api_keys k ON k.id = h.key_id WHERE h.request_id = ?",
      requestId,
    );
    const json = parseJsonOutput<Json>({ ...(await audit('--key', keyId, '--json')), code: 0 }, 'audit --json');
    assert.equal(json.ok, false);
    const ends = json.violations.filter((v: Json) => v.check === 'hold_ends');
    assert.equal(ends.length, 1);
    assert.equal(ends[0].request_id, requestId);
    assert.equal((await audit('--key', keyId)).code, 1);
  });

  test('a capture without its usage row is named, exit 1', async () => {
    const { keyId, requestId } = served[2]!;
    writeDb(e.gw.dbPath, 'DELETE FROM usage_records WHERE request_id = ?', requestId);
    const res = await audit('--key', keyId);
    assert.equal(res.code, 1);
    assert.match(res.stdout, new RegExp(`VIOLATION capture_without_usage key=${keyId} request=${requestId}: capture of \\d+ has no usage row`));
    assert.doesNotMatch(res.stdout, /cached_balance|hold_ends/, 'only what was broken');
  });

  test('an active hold past its expiry and a sweep interval is named, exit 1', async () => {
    const { keyId } = served[3]!;
    const db = openSqliteFile(e.gw.dbPath);
    try {
      db.transaction(() => {
        db.prepare("INSERT INTO holds (request_id, key_id, amount, status, expires_at, created_at) VALUES ('req-stuck', ?, 5, 'active', 1000, 0)").run(keyId);
        db.prepare("INSERT INTO ledger_entries (account_id, key_id, request_id, kind, amount, created_at) SELECT account_id, id, 'req-stuck', 'hold', 5, 0 FROM api_keys WHERE id = ?").run(keyId);
        db.prepare('UPDATE api_keys SET held = held + 5 WHERE id = ?').run(keyId);
        db.prepare('UPDATE accounts SET held = held + 5 WHERE id = (SELECT account_id FROM api_keys WHERE id = ?)').run(keyId);
      })();
    } finally {
      db.close();
    }
    const json = parseJsonOutput<Json>({ ...(await audit('--key', keyId, '--json')), code: 0 }, 'audit --json');
    assert.deepEqual(json.violations.map((v: Json) => [v.check, v.request_id]), [['expired_hold_active', 'req-stuck']]);
  });

  test('the whole database lists every violation', async () => {
    const res = await audit();
    assert.equal(res.code, 1);
    for (const check of ['account_cached_balance', 'hold_ends', 'capture_without_usage', 'expired_hold_active']) assert.match(res.stdout, new RegExp(`VIOLATION ${check} `));
  });
});

const pgSkip = await postgresSkipReason();

describe('audit on PostgreSQL', { skip: pgSkip }, () => {
  test('clean after a capture; a capture without usage row and a cached balance off by 1 are found', async () => {
    const schema = await freshPgSchema();
    const store = await openPostgresStore(schema.url);
    try {
      const now = Date.now();
      await store.keys.create({ id: 'key_pg', name: 'pg', prefix: 'tg-x', secretHash: 'h', allowedModels: '*', initialBalance: 1_000_000, topupRequestId: 'topup-1', now });
      const budget = { limit: null, periodStart: 0 };
      await store.ledger.placeHold({ requestId: 'r1', keyId: 'key_pg', amount: 5000, now, expiresAt: now + 60_000, budget });
      const usage = { requestId: 'r1', time: now, keyId: 'key_pg', model: 'm', provider: 'p', upstreamModel: 'u', status: 200, inputTokens: 1, cachedInputTokens: 0, outputTokens: 1, reasoningTokens: 0, cost: 3000, usageSource: 'upstream' as const, attempts: [], endpoint: null, errorCode: null, errorMessage: null, durationMs: null, firstTokenMs: null, sessionId: null };
      await store.ledger.settle({ requestId: 'r1', cost: 3000, usage, now, budget });
      assert.deepEqual(await store.ledger.findViolations({ keyId: undefined, staleBefore: now }), []);
      const pg = await import('pg');
      const client = new pg.default.Client({ connectionString: schema.url });
      await client.connect();
      await client.query("DELETE FROM usage_records WHERE request_id = 'r1'");
      await client.query("UPDATE accounts SET balance = balance - 1 WHERE id = 'acct_pg'");
      await client.end();
      const found = await store.ledger.findViolations({ keyId: 'key_pg', staleBefore: now });
      assert.deepEqual(found.map((v) => [v.check, v.requestId]).sort(), [['account_cached_balance', null], ['capture_without_usage', 'r1']]);
    } finally {
      await store.close();
      await schema.drop();
    }
  });
});

describe('GET /admin/v1/audit', () => {
  let a: AdminE2E;

  before(async () => {
    a = await startAdminE2E('sqlite');
  });

  after(() => a?.close());

  test('the same checks over the admin API: ok on a clean database, the violation named after a corruption', async () => {
    const key = await a.gw.createKey({ name: 'admin-audit', balance: 1 });
    await chatOnce(a.gw, key.key);
    assert.deepEqual(await adminOk(a.gw, 'GET', '/audit'), { object: 'audit', ok: true, violations: [] });
    writeDb(a.gw.dbPath, 'UPDATE api_keys SET spent = spent + 1 WHERE id = ?', key.id);
    const report = await adminOk(a.gw, 'GET', `/audit?key_id=${key.id}`);
    assert.equal(report.ok, false);
    // The key's cached spent is off, so its account's spent no longer equals the sum of its keys'.
    assert.deepEqual(report.violations.map((v: Json) => [v.check, v.key_id, v.account_id]), [
      ['cached_balance', key.id, undefined],
      ['account_vs_keys', null, key.account_id],
    ]);
    assert.match(report.violations[0].detail, /cached spent/);
    assertError(await admin(a.gw, 'GET', '/audit?bogus=1'), 400, 'invalid_request');
    // (The admin API also sets a key's clamp_max_tokens.)
    assert.equal((await adminOk(a.gw, 'PATCH', `/keys/${key.id}`, { body: { clamp_max_tokens: true } })).clamp_max_tokens, true);
    assertError(await admin(a.gw, 'PATCH', `/keys/${key.id}`, { body: { clamp_max_tokens: 'maybe' } }), 400, 'invalid_request');
    assertError(await admin(a.gw, 'GET', '/audit', { token: null }), 401, 'invalid_admin_token');
  });
});
