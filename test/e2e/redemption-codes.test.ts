// Redemption codes end to end (docs/adr/0051-redemption-codes.md) on a real gateway, SQLite and
// PostgreSQL: `tollgate codes create` prints N codes once and the database holds only their hashes; a
// code redeemed with an account token, and one with a key, credits the right account once; 50 redeems
// of one code at once answer exactly one 200 and credit once (the audit stays clean); a used, revoked,
// expired, unknown or other account's code each answers its own error and changes nothing; the admin
// API creates (an Idempotency-Key replay shows no codes), lists, revokes and exports CSV without codes;
// and the guess limit answers 429 with Retry-After after the threshold, per key and per address — on one
// gateway, and across two gateways sharing Redis.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { hashKeySecret } from '../../src/keys/secret.js';
import { openSqliteFile } from '../../src/storage/sqlite/driver.js';
import { ADMIN_TOKEN, adminConfigYaml, adminDialects, adminOk, assertError, admin } from '../support/admin.js';
import { call, extendConfig, parseJsonOutput, type Json, type RawResponse } from '../support/e2e.js';
import { mockConfig, readDatabase, startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { freshPgSchema, postgresSkipReason, type PgSchema } from '../support/postgres.js';
import { redisSkipReason, TEST_REDIS_URL } from '../support/redis.js';
import { usdToNano } from '../support/money.js';

const CODE = /^tgr-[a-z2-7]{32}$/;

interface Gateway {
  readonly gw: GatewayProcess;
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/** A gateway with the admin API on, X-Forwarded-For believed from loopback (each test its own address), and this guess limit. */
async function startCodesGateway(dialect: 'sqlite' | 'postgres', redeemFailures: number): Promise<Gateway & { mock: MockUpstream }> {
  const mock = await startMockUpstream();
  let schema: PgSchema | undefined;
  try {
    schema = dialect === 'postgres' ? await freshPgSchema() : undefined;
    const config = extendConfig(mockConfig(mock, `${adminConfigYaml}limits:\n  redeem_failures: ${redeemFailures}\n`), { server: '  trust_proxy: loopback' });
    const gw = await startGateway({ config, env: { TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN }, ...(schema ? { database: schema.url } : {}) });
    const pool = schema ? new pg.Pool({ connectionString: schema.url, max: 1 }) : undefined;
    return {
      gw,
      mock,
      async query<T>(sql: string, params: unknown[] = []) {
        if (pool) return (await pool.query(sql, params)).rows as T[];
        if (!/^\s*SELECT/i.test(sql)) return writeSqlite(gw.dbPath, sql, params);
        return readDatabase(gw.dbPath, (db) => db.prepare(sql.replace(/\$\d+/g, '?')).all(...params) as T[]);
      },
      async close() {
        await pool?.end();
        await mock.close();
        await stopGateway(gw, 10_000);
        await schema?.drop();
      },
    };
  } catch (error) {
    await mock.close();
    await schema?.drop();
    throw error;
  }
}

/** A write straight to the gateway's SQLite file (WAL: the gateway sees it at its next read). */
function writeSqlite<T>(file: string, sql: string, params: unknown[]): T[] {
  const db = openSqliteFile(file);
  try {
    db.pragma('busy_timeout = 5000');
    db.prepare(sql.replace(/\$\d+/g, '?')).run(...params);
    return [];
  } finally {
    db.close();
  }
}

let address = 0;
/** A fresh client address (the guess limit counts per address too). */
const freshAddress = () => `10.0.${Math.floor(++address / 250)}.${(address % 250) + 1}`;

function redeem(gw: GatewayProcess, credential: string, code: unknown, from: string): Promise<RawResponse> {
  return call(gw, 'POST', '/account/redeem', { key: credential, body: { code }, headers: { 'x-forwarded-for': from } });
}

async function newAccount(gw: GatewayProcess, name: string, balance = '1'): Promise<{ id: string; token: string }> {
  const account = await adminOk(gw, 'POST', '/accounts', { body: { name, balance } });
  const issued = await adminOk(gw, 'POST', `/accounts/${account.id}/token`);
  return { id: account.id, token: issued.token };
}

async function createCodes(gw: GatewayProcess, args: string[]): Promise<string[]> {
  const result = await gw.cli(['codes', 'create', ...args]);
  assert.equal(result.code, 0, result.stderr);
  return result.stdout.trim().split('\n');
}

const balanceOf = async (gw: GatewayProcess, id: string): Promise<number> => usdToNano((await adminOk(gw, 'GET', `/accounts/${id}`)).balance);

async function auditClean(gw: GatewayProcess): Promise<void> {
  const audit = await gw.cli(['audit', '--json']);
  assert.equal(audit.code, 0, audit.stdout + audit.stderr);
  assert.equal(JSON.parse(audit.stdout).ok, true);
}

for (const dialect of await adminDialects()) {
  describe(`redemption codes (${dialect.name})`, { skip: dialect.skip }, () => {
    let g: Gateway;
    before(async () => {
      g = await startCodesGateway(dialect.name, 100);
    });
    after(async () => {
      await g?.close();
    });

    test('CLI create prints N codes once; the database holds only their hashes; a token and a key each credit their account once', async () => {
      const team = await newAccount(g.gw, 'team');
      const codes = await createCodes(g.gw, ['--amount', '2.5', '--count', '3', '--note', 'launch']);
      assert.equal(codes.length, 3);
      for (const code of codes) assert.match(code, CODE);
      assert.equal(new Set(codes).size, 3);
      const rows = await g.query<Record<string, unknown>>('SELECT * FROM redemption_codes');
      const stored = JSON.stringify(rows);
      for (const code of codes) {
        assert.ok(!stored.includes(code.slice(4)), 'no code is stored in clear');
        assert.ok(rows.some((r) => r.code_hash === hashKeySecret(code)), 'its SHA-256 is');
      }

      // With the account token.
      const before = await balanceOf(g.gw, team.id);
      const res = await redeem(g.gw, team.token, codes[0], freshAddress());
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        { object: res.json.object, amount: res.json.amount, account_id: res.json.account_id, balance: usdToNano(res.json.balance) },
        { object: 'redemption', amount: 2.5, account_id: team.id, balance: before + usdToNano('2.5') },
      );
      assert.equal(await balanceOf(g.gw, team.id), before + usdToNano('2.5'));

      // With a key: its account is credited, and the code records the key.
      const key = parseJsonOutput(await g.gw.cli(['keys', 'create', '--name', 'dev', '--account', team.id, '--json']), 'keys create');
      const personal = await g.gw.createKey({ name: 'solo', balance: 1 });
      const viaKey = await redeem(g.gw, key.key, codes[1]!.toUpperCase(), freshAddress());
      assert.equal(viaKey.status, 200, 'a code typed in capitals is the same code');
      assert.equal(viaKey.json.account_id, team.id);
      const soloBefore = await balanceOf(g.gw, personal.account_id);
      const viaPersonal = await redeem(g.gw, personal.key, ` ${codes[2]} `, freshAddress());
      assert.equal(viaPersonal.status, 200, viaPersonal.text);
      assert.equal(await balanceOf(g.gw, personal.account_id), soloBefore + usdToNano('2.5'));
      const listed = await adminOk(g.gw, 'GET', `/codes/${viaKey.json.code_id}`);
      assert.deepEqual([listed.status, listed.redeemed_account_id, listed.redeemed_key_id], ['redeemed', team.id, key.id]);
      const entries = await adminOk(g.gw, 'GET', `/accounts/${team.id}/ledger`);
      assert.equal(entries.data.filter((e: Json) => e.kind === 'topup' && e.request_id?.startsWith('redeem_')).length, 2);
      await auditClean(g.gw);
    });

    test('50 redeems of one code at once: exactly one 200, the balance up once, the audit clean', async () => {
      const team = await newAccount(g.gw, 'racers');
      const [code] = await createCodes(g.gw, ['--amount', '7']);
      const before = await balanceOf(g.gw, team.id);
      const from = freshAddress();
      const answers = await Promise.all(Array.from({ length: 50 }, () => redeem(g.gw, team.token, code, from)));
      const statuses = answers.map((a) => a.status);
      const ok = answers.filter((a) => a.status === 200);
      assert.equal(ok.length, 1, `statuses: ${statuses.join(',')}`);
      for (const a of answers.filter((x) => x.status !== 200)) assertError(a, 409, 'code_redeemed');
      assert.equal(await balanceOf(g.gw, team.id), before + usdToNano(7));
      assert.equal(usdToNano(ok[0]!.json.balance), before + usdToNano(7));
      await auditClean(g.gw);
      process.stdout.write(`# ${dialect.name}: 50 parallel redeems → ${ok.length}×200, ${statuses.filter((s) => s === 409).length}×409; balance +7 once\n`);
    });

    test('used, revoked, expired, unknown and another account\'s codes each answer their error and change nothing', async () => {
      const team = await newAccount(g.gw, 'refused');
      const other = await newAccount(g.gw, 'other');
      const [used, revoked, expiring] = await createCodes(g.gw, ['--amount', '1', '--count', '3']);
      const [theirs] = await createCodes(g.gw, ['--amount', '1', '--account', other.id]);
      assert.equal((await redeem(g.gw, team.token, used, freshAddress())).status, 200);
      const revokedId = (await adminOk(g.gw, 'GET', '/codes?status=unused')).data.find((c: Json) => revoked!.startsWith(c.prefix) && c.prefix.length === 10).id;
      await adminOk(g.gw, 'POST', `/codes/${revokedId}/revoke`);
      // An expired code: one whose expiry has passed (written in the database, as time passing would).
      await g.query('UPDATE redemption_codes SET expires_at = $1 WHERE code_hash = $2', [Date.now() - 1, hashKeySecret(expiring!)]);

      const snapshot = async () => ({
        balances: [await balanceOf(g.gw, team.id), await balanceOf(g.gw, other.id)],
        codes: await g.query('SELECT id, redeemed_at, redeemed_account_id, revoked_at FROM redemption_codes ORDER BY id'),
        entries: (await g.query<{ n: number }>('SELECT COUNT(*) AS n FROM ledger_entries'))[0]!.n,
      });
      const beforeAll = await snapshot();
      assertError(await redeem(g.gw, team.token, used, freshAddress()), 409, 'code_redeemed');
      assertError(await redeem(g.gw, team.token, revoked, freshAddress()), 410, 'code_revoked');
      assertError(await redeem(g.gw, team.token, expiring, freshAddress()), 410, 'code_expired');
      assertError(await redeem(g.gw, team.token, `tgr-${'a'.repeat(32)}`, freshAddress()), 404, 'code_not_found');
      assertError(await redeem(g.gw, team.token, theirs, freshAddress()), 403, 'code_wrong_account');
      assertError(await redeem(g.gw, team.token, 'tgr-short', freshAddress()), 400, 'invalid_request');
      assertError(await call(g.gw, 'POST', '/account/redeem', { key: team.token, body: { code: used, extra: 1 } }), 400, 'invalid_request');
      assertError(await redeem(g.gw, 'tga-not-a-token', used, freshAddress()), 401, 'invalid_account_token');
      // A suspended account: the code stays unused.
      await adminOk(g.gw, 'POST', `/accounts/${other.id}/suspend`);
      assertError(await redeem(g.gw, other.token, theirs, freshAddress()), 402, 'account_suspended');
      assert.deepEqual(await snapshot(), beforeAll);
      await adminOk(g.gw, 'POST', `/accounts/${other.id}/resume`);
      assert.equal((await redeem(g.gw, other.token, theirs, freshAddress())).status, 200, 'its own account redeems it');
    });

    test('admin API: create with an Idempotency-Key (a replay shows no codes), list with a cursor, revoke a batch, CSV without codes', async () => {
      const headers = { 'idempotency-key': `codes-${dialect.name}` };
      const created = await adminOk(g.gw, 'POST', '/codes', { body: { amount: '0.5', count: 3, expires_at: '30d', note: 'admin' }, headers });
      assert.equal(created.object, 'redemption_code_batch');
      assert.equal(created.codes.length, 3);
      for (const c of created.codes) assert.match(c.code, CODE);
      const replay = await admin(g.gw, 'POST', '/codes', { body: { amount: '0.5', count: 3, expires_at: '30d', note: 'admin' }, headers });
      assert.equal(replay.status, 200);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.equal(replay.json.batch_id, created.batch_id);
      assert.deepEqual(replay.json.codes.map((c: Json) => c.code), [null, null, null]);
      assert.equal((await adminOk(g.gw, 'GET', `/codes?batch_id=${created.batch_id}`)).data.length, 3, 'the replay made no codes');

      assertError(await admin(g.gw, 'POST', '/codes', { body: { amount: 0, count: 1 } }), 400, 'invalid_request');
      assertError(await admin(g.gw, 'POST', '/codes', { body: { amount: 1, count: 1001 } }), 400, 'invalid_request');
      assertError(await admin(g.gw, 'POST', '/codes', { body: { amount: 1, account_id: 'acct_nobody' } }), 404, 'account_not_found');
      assertError(await admin(g.gw, 'POST', '/codes', { body: { amount: 1, expires_at: '2001-01-01T00:00:00Z' } }), 400, 'invalid_request');
      assertError(await admin(g.gw, 'GET', '/codes?status=lost'), 400, 'invalid_request');
      assertError(await admin(g.gw, 'GET', '/codes/rc_nothing'), 404, 'code_not_found');

      const first = await adminOk(g.gw, 'GET', `/codes?batch_id=${created.batch_id}&limit=2`);
      assert.equal(first.has_more, true);
      const rest = await adminOk(g.gw, 'GET', `/codes?batch_id=${created.batch_id}&limit=2&after=${first.next_cursor}`);
      assert.deepEqual([...first.data, ...rest.data].map((c: Json) => c.id).sort(), created.codes.map((c: Json) => c.id).sort());

      const team = await newAccount(g.gw, 'admin-api');
      assert.equal((await redeem(g.gw, team.token, created.codes[0].code, freshAddress())).status, 200);
      const revoked = await adminOk(g.gw, 'POST', '/codes/revoke', { body: { batch_id: created.batch_id } });
      assert.equal(revoked.revoked, 2, 'the redeemed one stays redeemed');
      assertError(await admin(g.gw, 'POST', `/codes/${created.codes[0].id}/revoke`), 409, 'code_redeemed');
      assertError(await admin(g.gw, 'POST', '/codes/revoke', { body: { batch_id: 'batch_nothing' } }), 404, 'code_not_found');
      assertError(await redeem(g.gw, team.token, created.codes[1].code, freshAddress()), 410, 'code_revoked');

      for (const path of [`/codes.csv?batch_id=${created.batch_id}`, `/codes?format=csv&batch_id=${created.batch_id}`]) {
        const csv = await admin(g.gw, 'GET', path);
        assert.equal(csv.status, 200);
        assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
        const lines = csv.text.trim().split('\n');
        assert.equal(lines[0], 'id,prefix,batch_id,amount,status,account_id,expires_at,created_at,redeemed_at,redeemed_account_id,redeemed_key_id,revoked_at,note');
        assert.equal(lines.length, 4);
        assert.deepEqual(lines.slice(1).map((l) => l.split(',')[4]).sort(), ['redeemed', 'revoked', 'revoked']);
        for (const c of created.codes) assert.ok(!csv.text.includes(c.code.slice(10)), 'no code in the CSV');
      }
      const cliCsv = await g.gw.cli(['codes', 'export', '--csv', '--batch', created.batch_id]);
      assert.equal(cliCsv.code, 0, cliCsv.stderr);
      assert.equal(cliCsv.stdout.trim().split('\n').length, 4);
      const cliList = parseJsonOutput(await g.gw.cli(['codes', 'list', '--status', 'revoked', '--batch', created.batch_id, '--json']), 'codes list');
      assert.equal(cliList.length, 2);
      const cliRevoke = await g.gw.cli(['codes', 'revoke', created.codes[0].id]);
      assert.equal(cliRevoke.code, 1);
      assert.match(cliRevoke.stderr, /cannot be revoked/);
    });
  });
}

describe('the guess limit (sqlite)', () => {
  let g: Gateway;
  before(async () => {
    g = await startCodesGateway('sqlite', 3);
  });
  after(async () => {
    await g?.close();
  });

  test('failed redemptions count per key and per address: the next is 429 with Retry-After before the database; successes do not count', async () => {
    const team = await newAccount(g.gw, 'guesser');
    const key = parseJsonOutput(await g.gw.cli(['keys', 'create', '--name', 'k', '--account', team.id, '--json']), 'keys create');
    const [good, spare] = await createCodes(g.gw, ['--amount', '1', '--count', '2']);
    const wrong = () => `tgr-${'b'.repeat(32)}`;

    // Per key: three failures from three addresses, then 429 even for a good code from a fourth.
    for (let i = 0; i < 3; i++) assertError(await redeem(g.gw, key.key, wrong(), freshAddress()), 404, 'code_not_found');
    const limited = await redeem(g.gw, key.key, good, freshAddress());
    assertError(limited, 429, 'too_many_redeem_attempts');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1, 'Retry-After in seconds');
    assert.equal((await adminOk(g.gw, 'GET', '/codes?status=unused')).data.length, 2, 'the good code was not redeemed');
    // The account's token is another credential: it still redeems (successes count for nothing).
    const from = freshAddress();
    assert.equal((await redeem(g.gw, team.token, good, from)).status, 200);

    // Per address: three failures with three credentials from one address, then 429 for a fourth.
    const others = await Promise.all([1, 2, 3, 4].map((n) => newAccount(g.gw, `other-${n}`)));
    const shared = freshAddress();
    for (const other of others.slice(0, 3)) assertError(await redeem(g.gw, other.token, wrong(), shared), 404, 'code_not_found');
    assertError(await redeem(g.gw, others[3]!.token, spare, shared), 429, 'too_many_redeem_attempts');
    assert.equal((await redeem(g.gw, others[3]!.token, spare, freshAddress())).status, 200, 'from another address it redeems');
    await auditClean(g.gw);
  });
});

describe('the guess limit shared through Redis by two gateways (postgres)', { skip: (await postgresSkipReason()) ?? (await redisSkipReason()) }, () => {
  let mock: MockUpstream;
  let schema: PgSchema;
  const gateways: GatewayProcess[] = [];
  before(async () => {
    mock = await startMockUpstream();
    schema = await freshPgSchema();
    const config = extendConfig(mockConfig(mock, `${adminConfigYaml}redis: ${TEST_REDIS_URL}\nlimits:\n  redeem_failures: 3\n`), { server: '  trust_proxy: loopback' });
    gateways.push(...(await Promise.all([0, 1].map(() => startGateway({ config, env: { TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN }, database: schema.url })))));
  });
  after(async () => {
    await mock?.close();
    for (const gw of gateways) await stopGateway(gw, 10_000);
    await schema?.drop();
  });

  test("one credential's failures on either gateway count together; so do one address's", async () => {
    const [a, b] = gateways as [GatewayProcess, GatewayProcess];
    // Addresses no earlier run used (Redis keeps counts for the window, across runs).
    const address = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
    const team = await newAccount(a, 'shared');
    const [good] = await createCodes(a, ['--amount', '1']);
    const wrong = `tgr-${'c'.repeat(32)}`;
    for (const gw of [a, b, a]) assertError(await redeem(gw, team.token, wrong, address()), 404, 'code_not_found');
    assertError(await redeem(b, team.token, good, address()), 429, 'too_many_redeem_attempts');

    const shared = address();
    const others = await Promise.all([1, 2, 3, 4].map((n) => newAccount(a, `shared-${n}`)));
    for (const [i, other] of others.slice(0, 3).entries()) assertError(await redeem(i % 2 ? b : a, other.token, wrong, shared), 404, 'code_not_found');
    assertError(await redeem(b, others[3]!.token, good, shared), 429, 'too_many_redeem_attempts');
    assert.equal((await redeem(b, others[3]!.token, good, address())).status, 200);
  });
});
