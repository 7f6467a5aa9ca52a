// The NewKey the storage and pipeline unit tests create their API keys from.
import type { NewKey } from '../../src/storage/types.js';

/** Key `id`, named after itself and allowed every model, with no balance at time 0 unless `overrides` say so. */
export function testNewKey(id: string, overrides: Partial<NewKey> = {}): NewKey {
  return {
    id,
    name: id,
    prefix: 'tg-xxxxxxx',
    secretHash: `hash-${id}`,
    allowedModels: '*',
    initialBalance: 0,
    topupRequestId: `topup-${id}`,
    now: 0,
    ...overrides,
  };
}
