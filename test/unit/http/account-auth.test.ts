// Account-token authentication (docs/adr/0047-accounts.md): a `tga-` token in Authorization: Bearer,
// x-api-key or api-key names an account by its hash; anything else — a key secret, a malformed token, two
// different tokens — is 401 invalid_account_token before any database read, and a key secret never
// authenticates an account (nor an account token a key).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isGatewayError } from '../../../src/errors.js';
import { accountTokenOf, authenticate, authenticateAccount, authenticatePayer, keySecretOf } from '../../../src/http/auth.js';
import { generateAccountToken, generateKeySecret, hashKeySecret } from '../../../src/keys/secret.js';
import type { AccountRecord, AccountStore, KeyRecord, KeyStore } from '../../../src/storage/types.js';

const ACCOUNT = { id: 'acct_1', name: 'team', status: 'suspended' } as AccountRecord;

/** An account store that knows one token's hash and counts its reads. */
function accountsKnowing(token: string): AccountStore & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    async findByTokenHash(hash: string) {
      reads.push(hash);
      return hash === hashKeySecret(token) ? ACCOUNT : undefined;
    },
  } as unknown as AccountStore & { reads: string[] };
}

const refused = (code: string) => (error: unknown) => isGatewayError(error) && error.code === code && error.status === 401;

describe('authenticateAccount', () => {
  const token = generateAccountToken();

  test('finds the account by its token in any of the three headers; a suspended account still authenticates', async () => {
    for (const headers of [{ authorization: `Bearer ${token}` }, { 'x-api-key': token }, { 'api-key': token }]) {
      const accounts = accountsKnowing(token);
      assert.equal(await authenticateAccount(accounts, headers), ACCOUNT, JSON.stringify(headers));
      assert.deepEqual(accounts.reads, [hashKeySecret(token)], 'looked up by the hash');
    }
  });

  test('a missing, malformed or key-shaped credential is refused without a database read', async () => {
    const accounts = accountsKnowing(token);
    const keySecret = generateKeySecret();
    for (const headers of [
      {},
      { authorization: 'Bearer' },
      { authorization: `Bearer ${keySecret}` },
      { 'x-api-key': keySecret },
      { authorization: `Bearer ${token}x` },
      { authorization: `Bearer ${token.slice(0, -1)}` },
      { authorization: `Bearer tga-${'!'.repeat(43)}` },
      { authorization: `Basic ${token}` },
      { authorization: `Bearer ${token}`, 'x-api-key': generateAccountToken() },
    ]) {
      await assert.rejects(authenticateAccount(accounts, headers), refused('invalid_account_token'), JSON.stringify(headers));
    }
    assert.deepEqual(accounts.reads, [], 'no lookup');
  });

  test('an unknown (rotated, revoked) token is refused with the same 401', async () => {
    const accounts = accountsKnowing(token);
    const old = generateAccountToken();
    await assert.rejects(authenticateAccount(accounts, { authorization: `Bearer ${old}` }), refused('invalid_account_token'));
    assert.equal(accounts.reads.length, 1);
  });

  test('a database that does not answer is 503 ledger_unavailable', async () => {
    const failing = { findByTokenHash: () => Promise.reject(new Error('down')) } as unknown as AccountStore;
    await assert.rejects(
      authenticateAccount(failing, { authorization: `Bearer ${token}` }),
      (error: unknown) => isGatewayError(error) && error.code === 'ledger_unavailable' && error.status === 503,
    );
  });

  test('an account token is no key: key auth refuses it without a database read', async () => {
    let reads = 0;
    const keys = { findByHash: async () => (reads++, undefined) } as unknown as KeyStore;
    await assert.rejects(authenticate(keys, { authorization: `Bearer ${token}` }), refused('invalid_api_key'));
    assert.equal(reads, 0);
    assert.equal(keySecretOf({ authorization: `Bearer ${token}` }), undefined);
    assert.equal(accountTokenOf({ authorization: `Bearer ${generateKeySecret()}` }), undefined);
    assert.equal(accountTokenOf({ authorization: 'Bearer sk-ant-other', 'x-api-key': token }), token, 'a foreign bearer beside it does not hide it');
  });
});

describe('authenticatePayer (routes that add credit: an account token, or a key standing for its account)', () => {
  const token = generateAccountToken();
  const secret = generateKeySecret();
  const KEY = { id: 'key_1', accountId: 'acct_1', status: 'active', expiresAt: null } as KeyRecord;
  const keysKnowing = (key: KeyRecord): KeyStore =>
    ({ findByHash: async (hash: string) => (hash === hashKeySecret(secret) ? key : undefined) }) as unknown as KeyStore;
  const accounts = Object.assign(accountsKnowing(token), { get: async (id: string) => (id === ACCOUNT.id ? ACCOUNT : undefined) });

  test('an account token names the account, with no key', async () => {
    assert.deepEqual(await authenticatePayer(accounts, keysKnowing(KEY), { authorization: `Bearer ${token}` }), { account: ACCOUNT, key: null });
  });

  test("a key secret names the key's account, in any of the three headers", async () => {
    for (const headers of [{ authorization: `Bearer ${secret}` }, { 'x-api-key': secret }, { 'api-key': secret }]) {
      assert.deepEqual(await authenticatePayer(accounts, keysKnowing(KEY), headers), { account: ACCOUNT, key: KEY });
    }
  });

  test('a revoked or expired key, an unknown key and no credential are 401', async () => {
    const revoked = keysKnowing({ ...KEY, status: 'revoked' });
    const expired = keysKnowing({ ...KEY, expiresAt: Date.now() - 1 });
    await assert.rejects(authenticatePayer(accounts, revoked, { authorization: `Bearer ${secret}` }), refused('invalid_api_key'));
    await assert.rejects(authenticatePayer(accounts, expired, { authorization: `Bearer ${secret}` }), refused('invalid_api_key'));
    await assert.rejects(authenticatePayer(accounts, keysKnowing(KEY), { authorization: `Bearer ${generateKeySecret()}` }), refused('invalid_api_key'));
    await assert.rejects(authenticatePayer(accounts, keysKnowing(KEY), {}), refused('invalid_account_token'));
  });

  test("a key whose account is gone is 401, a database that fails reading the account 503", async () => {
    const orphan = keysKnowing({ ...KEY, accountId: 'acct_gone' });
    await assert.rejects(authenticatePayer(accounts, orphan, { authorization: `Bearer ${secret}` }), refused('invalid_api_key'));
    const failing = Object.assign(accountsKnowing(token), { get: () => Promise.reject(new Error('down')) });
    await assert.rejects(
      authenticatePayer(failing, keysKnowing(KEY), { authorization: `Bearer ${secret}` }),
      (error: unknown) => isGatewayError(error) && error.code === 'ledger_unavailable' && error.status === 503,
    );
  });
});
