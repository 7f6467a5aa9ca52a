// `--postgres`: the 100 keys of the spread-keys scenario, written straight through the store (a CLI
// process per key would take a minute). Each gets a balance no benchmark run can spend.
import { randomUUID } from 'node:crypto';
import { generateKeyId, generateKeySecret, hashKeySecret, keyPrefix } from '../dist/keys/secret.js';
import { openStore } from '../dist/storage/open-store.js';

export async function createSpreadKeys(database, count) {
  const store = await openStore(database);
  try {
    const secrets = [];
    for (let i = 0; i < count; i++) {
      const secret = generateKeySecret();
      await store.keys.create({
        id: generateKeyId(),
        name: `bench-spread-${i}`,
        prefix: keyPrefix(secret),
        secretHash: hashKeySecret(secret),
        allowedModels: '*',
        initialBalance: 1_000_000 * 1e9,
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
