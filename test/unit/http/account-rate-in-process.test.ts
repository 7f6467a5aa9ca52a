// /v1/account requests per account (limits.account_rpm): an account token's holder makes keys and reads
// usage there, and past the limit in the rolling minute gets 429 account_rate_limited with an integer
// Retry-After — counted per account, so another account is not affected, and a refused request changes
// nothing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAccount, issueAccountToken } from '../../../src/operations/accounts.js';
import { startInProcess, type InProcessGateway } from '../../support/in-process.js';
import { mockConfig } from '../../support/mock-config.js';

describe('/v1/account requests per account (in process)', () => {
  let gw: InProcessGateway;

  before(async () => {
    gw = await startInProcess((mock) => mockConfig(mock, 'limits:\n  account_rpm: 3\n'));
  });
  after(async () => {
    await gw.close();
  });

  const tokenFor = async (name: string) => (await issueAccountToken(gw.store, (await createAccount(gw.store, gw.config, { name, balance: '5' })).id)).token;

  test('past account_rpm in the minute: 429 account_rate_limited with an integer Retry-After; another account is not affected', async () => {
    assert.equal(gw.config.limits.accountRpm, 3);
    const busy = await tokenFor('busy');
    const quiet = await tokenFor('quiet');
    for (let i = 0; i < 3; i++) assert.equal((await gw.call('GET', '/account', { key: busy })).statusCode, 200);
    const refused = await gw.call('POST', '/account/keys', { key: busy, body: { name: 'one-too-many' } });
    assert.equal(refused.statusCode, 429, refused.body);
    assert.equal(refused.json<{ error: { code: string } }>().error.code, 'account_rate_limited');
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, String(refused.headers['retry-after']));
    const account = (await gw.call('GET', '/account', { key: quiet })).json<{ id: string }>();
    assert.ok(account.id, 'another account is answered');
    const keys = await gw.store.keys.list();
    assert.ok(!keys.some((k) => k.name === 'one-too-many'), 'the refused request made no key');
  });

  test('the default is 300 a minute, and null turns the limit off', async () => {
    const other = await startInProcess((mock) => mockConfig(mock, 'limits:\n  account_rpm: null\n'));
    try {
      assert.equal(other.config.limits.accountRpm, null);
      const token = (await issueAccountToken(other.store, (await createAccount(other.store, other.config, { name: 'free', balance: '1' })).id)).token;
      for (let i = 0; i < 10; i++) assert.equal((await other.call('GET', '/account', { key: token })).statusCode, 200);
    } finally {
      await other.close();
    }
    const plain = await startInProcess();
    try {
      assert.equal(plain.config.limits.accountRpm, 300);
    } finally {
      await plain.close();
    }
  });
});
