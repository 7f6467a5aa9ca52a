// The keys of the spread-keys scenarios, written straight through the store (a CLI process per key would
// take a minute): `--postgres`'s 100 keys, each with its own (personal) account, and `--accounts`' 10 keys
// of one account. Each key, or the shared account, gets a balance no benchmark run can spend.
import { randomUUID } from 'node:crypto';
import { generateAccountId, generateKeyId, generateKeySecret, hashKeySecret, keyPrefix } from '../dist/keys/secret.js';
import { openStore } from '../dist/storage/open-store.js';

const UNSPENDABLE = 1_000_000 * 1e9;

/** `count` keys; with `sharedAccount`, all of them in one new account holding the balance. */
export async function createSpreadKeys(database, count, { sharedAccount = false } = {}) {
  const store = await openStore(database);
  try {
    const accountId = sharedAccount ? generateAccountId() : undefined;
    if (accountId) {
      await store.accounts.create({ id: accountId, name: 'bench-account', initialBalance: UNSPENDABLE, topupRequestId: `topup_${randomUUID()}`, now: Date.now() });
    }
    const secrets = [];
    for (let i = 0; i < count; i++) {
      const secret = generateKeySecret();
      await store.keys.create({
        id: generateKeyId(),
        ...(accountId ? { accountId } : {}),
        name: `bench-spread-${i}`,
        prefix: keyPrefix(secret),
        secretHash: hashKeySecret(secret),
        allowedModels: '*',
        initialBalance: accountId ? 0 : UNSPENDABLE,
        topupRequestId: `topup_${randomUUID()}`,
        now: Date.now(),
      });
      secrets.push(secret);
    }
    return secrets;
  } finally {
    await store.close();
  }
}
