// Account-token authentication (docs/adr/0047-accounts.md): a `tga-` token in Authorization: Bearer,
// x-api-key or api-key names an account by its hash; anything else — a key secret, a malformed token, two
// different tokens — is 401 invalid_account_token before any database read, and a key secret never
// authenticates an account (nor an account token a key).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isGatewayError } from '../../../src/errors.js';
import { accountTokenOf, authenticate, authenticateAccount, keySecretOf } from '../../../src/http/auth.js';
import { generateAccountToken, generateKeySecret, hashKeySecret } from '../../../src/keys/secret.js';
import type { AccountRecord, AccountStore, KeyStore } from '../../../src/storage/types.js';

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
