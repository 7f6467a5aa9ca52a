// Per-request usage rows, on SQLite and PostgreSQL alike: written by settlement, read back by key, time and count.
import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Store, UsageFilter, UsageRecord } from '../../src/storage/types.js';
import { testNewKey } from '../support/key-fixture.js';
import { storeDialects } from '../support/store-dialects.js';

const T0 = 1_750_000_000_000;

for (const dialect of await storeDialects()) {
  describe(dialect.name, { skip: dialect.skip }, () => {
    let store: Store;
    beforeEach(async () => {
      store = await dialect.open();
      for (const id of ['key_a', 'key_b']) await store.keys.create(testNewKey(id, { initialBalance: 1_000_000_000, now: T0 }));
    });
    afterEach(async () => {
      await store.close();
    });

    function row(requestId: string, keyId: string, time: number, overrides: Partial<UsageRecord> = {}): UsageRecord {
      return {
        requestId,
        time,
        keyId,
        model: 'gpt-4o-mini',
        provider: 'openai-main',
        upstreamModel: 'gpt-4o-mini-2024-07-18',
        status: 200,
        inputTokens: 10,
        cachedInputTokens: 0,
        outputTokens: 5,
        reasoningTokens: 0,
        cacheWriteTokens: 0,
        cost: 4_500,
        usageSource: 'upstream',
        attempts: [],
        endpoint: 'chat',
    errorCode: null,
    errorMessage: null,
    durationMs: 250,
    firstTokenMs: 40,
    sessionId: null,
        ...overrides,
      };
    }

    /** Places and settles a hold so the row is written the way the pipeline writes it. */
    async function record(usage: UsageRecord): Promise<void> {
      await store.ledger.placeHold({ requestId: usage.requestId, keyId: usage.keyId, amount: 10_000, now: usage.time, expiresAt: usage.time + 60_000, budget: { limit: null, periodStart: 0 } });
      assert.deepEqual(await store.ledger.settle({ requestId: usage.requestId, cost: usage.cost, usage, now: usage.time, budget: { limit: null, periodStart: 0 } }), { outcome: 'captured', charged: usage.cost });
    }

    describe('UsageStore', () => {
      test('reads back every field, attempts included', async () => {
        const usage = row('r1', 'key_a', T0 + 5, {
          status: 499,
          cachedInputTokens: 3,
          reasoningTokens: 2,
          cacheWriteTokens: 7,
          usageSource: 'estimated',
          errorCode: 'client_disconnected',
          errorMessage: 'The client disconnected before its answer was complete.',
          firstTokenMs: null,
          sessionId: null,
          endpoint: 'embeddings',
          attempts: [
            { provider: 'openai-main', status: 503, durationMs: 12 },
            { provider: 'openai-backup', status: 200, durationMs: 340 },
          ],
        });
        await record(usage);
        assert.deepEqual(await store.usage.list({ limit: 10 }), [usage]);
      });

      test('filters by key and by time (inclusive), oldest first', async () => {
        await record(row('a1', 'key_a', T0 + 1));
        await record(row('b1', 'key_b', T0 + 2));
        await record(row('a2', 'key_a', T0 + 3));
        await record(row('a3', 'key_a', T0 + 4));
        assert.deepEqual((await store.usage.list({ keyId: 'key_a', limit: 10 })).map((r) => r.requestId), ['a1', 'a2', 'a3']);
        assert.deepEqual((await store.usage.list({ since: T0 + 2, limit: 10 })).map((r) => r.requestId), ['b1', 'a2', 'a3']);
        assert.deepEqual((await store.usage.list({ keyId: 'key_b', since: T0 + 3, limit: 10 })).map((r) => r.requestId), []);
      });

      test('returns the most recent rows up to the limit, oldest first', async () => {
        for (let i = 1; i <= 5; i++) await record(row(`r${i}`, 'key_a', T0 + i));
        assert.deepEqual((await store.usage.list({ limit: 2 })).map((r) => r.requestId), ['r4', 'r5']);
      });

      test('orders rows written in the same millisecond by insertion', async () => {
        for (const id of ['x', 'y', 'z']) await record(row(id, 'key_a', T0));
        assert.deepEqual((await store.usage.list({ limit: 10 })).map((r) => r.requestId), ['x', 'y', 'z']);
        assert.deepEqual((await store.usage.list({ limit: 2 })).map((r) => r.requestId), ['y', 'z']);
      });

      test('records the rows of requests that moved no money, with unknown model and provider, and no ledger entry', async () => {
        const refused = row('refused', 'key_a', T0 + 1, {
          model: 'no-such-model',
          provider: null,
          upstreamModel: null,
          status: 404,
          inputTokens: 0,
          outputTokens: 0,
          cost: 0,
          usageSource: 'none',
          errorCode: 'model_not_found',
          errorMessage: 'The model does not exist or you do not have access to it.',
          firstTokenMs: null,
          sessionId: null,
        });
        const invalid = { ...refused, requestId: 'invalid', time: T0 + 2, model: null, status: 400, errorCode: 'invalid_request' };
        await store.usage.recordOutcomes([refused, invalid]);
        await store.usage.recordOutcomes([{ ...refused, status: 500 }]);
        assert.deepEqual(await store.usage.list({ limit: 10 }), [refused, invalid], 'a request id is recorded once');
        assert.deepEqual((await store.keys.entries({ keyId: 'key_a', limit: 10 })).map((e) => e.requestId).filter((id) => id === 'refused' || id === 'invalid'), []);
        assert.deepEqual(await store.ledger.findViolations({ keyId: undefined, staleBefore: T0 }), []);
      });

      test('filters by a status class and by endpoint and request id', async () => {
        const statuses = [200, 201, 402, 404, 429, 499, 502, 504];
        await store.usage.recordOutcomes(statuses.map((status, i) => row(`s${status}`, 'key_a', T0 + i, { status, endpoint: i % 2 ? 'embeddings' : 'chat' })));
        const ids = async (filter: UsageFilter) => (await store.usage.page({ ...filter, limit: 100 })).map((r) => r.record.status).sort();
        assert.deepEqual(await ids({ status: '2xx' }), [200, 201]);
        assert.deepEqual(await ids({ status: '4xx' }), [402, 404, 429, 499]);
        assert.deepEqual(await ids({ status: '5xx' }), [502, 504]);
        assert.deepEqual(await ids({ status: 'error' }), [402, 404, 429, 499, 502, 504]);
        assert.deepEqual(await ids({ status: 429 }), [429]);
        assert.deepEqual(await ids({ endpoint: 'embeddings', status: 'error' }), [404, 499, 504]);
        assert.deepEqual(await ids({ requestId: 's502' }), [502]);
        const totals = await store.usage.summarize({}, 'key');
        assert.deepEqual([totals[0]!.requests, totals[0]!.errors], [8, 6]);
      });

      test('adds up the per-minute counts of requests without a valid key, by minute, hour and day', async () => {
        const minute = 60_000;
        const start = Date.UTC(2026, 10, 27, 10, 0);
        await store.usage.countUnauthenticated([{ minute: start, requests: 3 }]);
        await store.usage.countUnauthenticated([
          { minute: start, requests: 2 },
          { minute: start + minute, requests: 4 },
        ]);
        await store.usage.countUnauthenticated([{ minute: start + 60 * minute, requests: 1 }]);
        assert.deepEqual(await store.usage.unauthenticated({}, 'minute'), [
          { minute: start, requests: 5 },
          { minute: start + minute, requests: 4 },
          { minute: start + 60 * minute, requests: 1 },
        ]);
        assert.deepEqual(await store.usage.unauthenticated({}, 'hour'), [
          { minute: start, requests: 9 },
          { minute: start + 60 * minute, requests: 1 },
        ]);
        assert.deepEqual(await store.usage.unauthenticated({ since: start + minute, until: start + 60 * minute }, 'day'), [
          { minute: Date.UTC(2026, 10, 27), requests: 4 },
        ]);
      });
    });
  });
}
