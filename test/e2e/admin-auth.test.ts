// Who may use the admin API: every /admin/v1 endpoint answers 401 (the §6 envelope) without the admin
// token, with a wrong one or with a Tollgate key; without admin.token every /admin path is a 404; the
// config refuses a short token; and no token, right or wrong, reaches a log line.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN, admin, adminConfigYaml, adminOk, assertError, startAdminE2E, type AdminE2E } from '../support/admin.js';
import { call } from '../support/e2e.js';
import { mockConfig, runCli, startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';

const ENDPOINTS: Array<[string, string, unknown?]> = [
  ['GET', '/keys'],
  ['POST', '/keys', { name: 'x' }],
  ['GET', '/keys/KEY'],
  ['PATCH', '/keys/KEY', { name: 'y' }],
  ['POST', '/keys/KEY/topup', { amount: 1 }],
  ['POST', '/keys/KEY/adjust', { amount: 1, reason: 'x' }],
  ['POST', '/keys/KEY/revoke'],
  ['POST', '/keys/KEY/rotate'],
  ['GET', '/keys/KEY/ledger'],
  ['GET', '/usage'],
  ['GET', '/usage.csv'],
  ['GET', '/usage/summary?group_by=day'],
  ['GET', '/providers'],
];
const WRONG_TOKEN = `${ADMIN_TOKEN.slice(0, -1)}x`;

describe('admin API authentication', () => {
  let e: AdminE2E;
  let keyId: string;
  let secret: string;
  before(async () => {
    e = await startAdminE2E('sqlite');
    const key = await adminOk(e.gw, 'POST', '/keys', { body: { name: 'target', balance: 1 } });
    keyId = key.id;
    secret = key.key;
  });
  after(async () => {
    if (!e) return;
    const logs = e.gw.logs.join('\n');
    await e.close();
    for (const token of [ADMIN_TOKEN, WRONG_TOKEN, secret]) assert.ok(!logs.includes(token), 'no token or secret in any log line');
  });

  test('every endpoint is 401 invalid_admin_token without a token, with a wrong one, or with a Tollgate key, and changes nothing', async () => {
    for (const [method, path, body] of ENDPOINTS) {
      for (const token of [null, WRONG_TOKEN, ADMIN_TOKEN.slice(0, 20), secret, '']) {
        const res = await admin(e.gw, method, path.replace('KEY', keyId), { token, ...(body ? { body } : {}) });
        assertError(res, 401, 'invalid_admin_token');
        assert.ok(!res.text.includes(ADMIN_TOKEN), 'the answer does not echo the token');
      }
      const basic = await admin(e.gw, method, path.replace('KEY', keyId), { token: null, headers: { authorization: `Basic ${ADMIN_TOKEN}` } });
      assertError(basic, 401, 'invalid_admin_token');
    }
    const key = await adminOk(e.gw, 'GET', `/keys/${keyId}`);
    assert.deepEqual([key.name, key.balance, key.status], ['target', 1, 'active'], 'nothing changed');
    assert.equal((await adminOk(e.gw, 'GET', '/keys')).data.length, 1, 'no key was created');
    assert.equal((await call(e.gw, 'GET', '/key', { key: secret })).status, 200, 'the secret still works');
  });

  test('the admin token is not a Tollgate key: /v1 refuses it', async () => {
    assert.equal((await call(e.gw, 'GET', '/models', { key: ADMIN_TOKEN })).status, 401);
  });

  test('the dashboard offers the operator view', async () => {
    const res = await call(e.gw, 'GET', '//dashboard/config.json');
    assert.equal(res.status, 200, 'npm run build made the dashboard');
    assert.deepEqual(res.json, { operator: true });
  });
});

describe('admin API disabled (no admin.token)', () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;
  before(async () => {
    mock = await startMockUpstream();
    // ${TOLLGATE_ADMIN_TOKEN:-} with the variable unset: the example config's way of leaving it off.
    gw = await startGateway({ config: mockConfig(mock, 'admin:\n  token: ${TOLLGATE_ADMIN_TOKEN:-}\n'), env: { TOLLGATE_ADMIN_TOKEN: '' } });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
  });

  test('every /admin path is 404 not_found, with or without a token', async () => {
    for (const [method, path, body] of [...ENDPOINTS, ['GET', '/anything'] as [string, string], ['GET', '/'] as [string, string]]) {
      for (const token of [null, ADMIN_TOKEN]) {
        assertError(await admin(gw, method, path.replace('KEY', 'key_1'), { token, ...(body ? { body } : {}) }), 404, 'not_found');
      }
    }
    assertError(await call(gw, 'GET', '//admin'), 404, 'not_found');
  });

  test('the dashboard offers no operator view', async () => {
    const res = await call(gw, 'GET', '//dashboard/config.json');
    assert.equal(res.status, 200, 'npm run build made the dashboard');
    assert.deepEqual(res.json, { operator: false });
  });
});

describe('admin.token in the config', () => {
  test('config check refuses a token shorter than 32 characters, naming the key but not the value', async () => {
    const mock = await startMockUpstream();
    try {
      const dir = mkdtempSync(join(tmpdir(), 'tollgate-admin-config-'));
      const path = join(dir, 'tollgate.yaml');
      try {
        writeFileSync(path, mockConfig(mock, adminConfigYaml).replace('{{DB}}', `sqlite:${join(dir, 'db.sqlite')}`));
        const short = await runCli(['config', 'check', '--config', path], { env: { TOLLGATE_ADMIN_TOKEN: 'short-token-31-characters-long!' } });
        assert.notEqual(short.code, 0);
        assert.match(short.stderr, /admin\.token: must be at least 32 characters/);
        assert.ok(!short.stderr.includes('short-token-31-characters-long!'), 'the value is not echoed');
        const long = await runCli(['config', 'check', '--config', path], { env: { TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN } });
        assert.equal(long.code, 0, long.stderr);
        assert.match(long.stdout, /admin API \(\/admin\/v1\): on/);
        assert.ok(!long.stdout.includes(ADMIN_TOKEN) && !long.stderr.includes(ADMIN_TOKEN), 'config check does not print the token');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    } finally {
      await mock.close();
    }
  });
});
