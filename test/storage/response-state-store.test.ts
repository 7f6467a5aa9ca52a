// The Responses state (product.md §14), on SQLite and PostgreSQL alike: a stored response's id and its
// output item ids, per key, each naming the response, the upstream account that holds it and its token
// counts; found only by the key that recorded them and only until they expire; the sweeper's expire
// deletes them in batches.
import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredResponse } from '../../src/storage/types.js';
import { testNewKey } from '../support/key-fixture.js';
import { storeDialects, type TestStore } from '../support/store-dialects.js';

const T0 = 1_750_000_000_000;
const DAY = 86_400_000;

function stored(overrides: Partial<StoredResponse> = {}): StoredResponse {
  return { keyId: 'key_a', responseId: 'resp_1', itemIds: ['rs_1', 'msg_1'], provider: 'openai', inputTokens: 120, outputTokens: 40, expiresAt: T0 + 30 * DAY, ...overrides };
}

for (const dialect of await storeDialects()) {
  describe(dialect.name, { skip: dialect.skip }, () => {
    let store: TestStore;
    beforeEach(async () => {
      store = await dialect.open();
      await store.keys.create(testNewKey('key_a'));
      await store.keys.create(testNewKey('key_b'));
    });
    afterEach(async () => {
      await store.close();
    });

    test('a recorded response is found by its id and by each output item id, with its account and counts', async () => {
      await store.responses.record(stored());
      const refs = await store.responses.find('key_a', ['resp_1', 'msg_1', 'rs_1', 'resp_other'], T0);
      const ref = { responseId: 'resp_1', provider: 'openai', inputTokens: 120, outputTokens: 40 };
      assert.deepEqual(
        refs.sort((a, b) => a.id.localeCompare(b.id)),
        [
          { id: 'msg_1', ...ref },
          { id: 'resp_1', ...ref },
          { id: 'rs_1', ...ref },
        ],
      );
      const rows = await store.query<{ id: string }>('SELECT * FROM response_ids ORDER BY id');
      assert.deepEqual(Object.keys(rows[0]!).sort(), ['expires_at', 'id', 'input_tokens', 'key_id', 'output_tokens', 'provider', 'response_id'], 'ids and counts only, never content');
    });

    test("another key's ids are not found: a key continues only what it made", async () => {
      await store.responses.record(stored());
      assert.deepEqual(await store.responses.find('key_b', ['resp_1', 'msg_1'], T0), []);
      assert.deepEqual(await store.responses.find('key_a', [], T0), []);
    });

    test('an id recorded again (an item repeated, a response replayed) takes the new figures, once', async () => {
      await store.responses.record(stored({ itemIds: ['msg_1', 'msg_1'] }));
      await store.responses.record(stored({ provider: 'backup', inputTokens: 5, outputTokens: 6, itemIds: ['msg_1'] }));
      const refs = await store.responses.find('key_a', ['resp_1', 'msg_1'], T0);
      assert.equal(refs.length, 2);
      for (const ref of refs) assert.deepEqual([ref.provider, ref.inputTokens, ref.outputTokens], ['backup', 5, 6]);
    });

    test('an expired id is not found, and expire deletes expired ids in batches, the live ones kept', async () => {
      await store.responses.record(stored({ responseId: 'resp_old', itemIds: ['old_1', 'old_2'], expiresAt: T0 + 10 }));
      await store.responses.record(stored({ expiresAt: T0 + DAY }));
      assert.deepEqual(await store.responses.find('key_a', ['resp_old'], T0 + 10), [], 'gone at its expiry');
      assert.equal(await store.responses.expire(T0 + 10, 2), 2);
      assert.equal(await store.responses.expire(T0 + 10, 2), 1);
      assert.equal(await store.responses.expire(T0 + 10, 2), 0);
      assert.equal((await store.responses.find('key_a', ['resp_1', 'rs_1', 'msg_1'], T0 + 10)).length, 3);
    });
  });
}
