// What the admin API asks of storage, on SQLite and PostgreSQL alike: keys paged in creation order with
// filters, credits (top-ups and adjustments) applied once per request id and never overdrawing, key
// changes and rotation, ledger entries and usage rows newest first by keyset cursor — each row seen
// once while rows are written concurrently — and usage totals by group. Also the operations over them.
import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../src/config/load.js';
import { listLedger } from '../../src/operations/key-money.js';
import { listKeys } from '../../src/operations/list-keys.js';
import { listUsage, walkUsage } from '../../src/operations/usage.js';
import type { Store, UsageRecord } from '../../src/storage/types.js';
import { testNewKey } from '../support/key-fixture.js';
import { storeDialects } from '../support/store-dialects.js';

const T0 = 1_750_000_000_000;
const HOUR = 3_600_000;
const CONFIG = parseConfig(
  `providers: { p: { kind: openai, api_key: x } }\nmodels: { m: { upstreams: [{ provider: p, model: m }], price: { input: 1, output: 1 }, max_output_tokens: 10 } }\n`,
  '/tmp/tollgate.yaml',
);

function row(requestId: string, keyId: string, time: number, overrides: Partial<UsageRecord> = {}): UsageRecord {
  return {
    requestId,
    time,
    keyId,
    model: 'm1',
    provider: 'p1',
    upstreamModel: 'u1',
    status: 200,
    inputTokens: 10,
    cachedInputTokens: 2,
    outputTokens: 5,
    reasoningTokens: 1,
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

for (const dialect of await storeDialects()) {
  describe(dialect.name, { skip: dialect.skip }, () => {
    let store: Store;
    beforeEach(async () => {
      store = await dialect.open();
    });
    afterEach(async () => {
      await store.close();
    });

    async function record(usage: UsageRecord): Promise<void> {
      const budget = { limit: null, periodStart: 0 };
      await store.ledger.placeHold({ requestId: usage.requestId, keyId: usage.keyId, amount: 10_000, now: usage.time, expiresAt: usage.time + 60_000, budget });
      await store.ledger.settle({ requestId: usage.requestId, cost: usage.cost, usage, now: usage.time, budget });
    }

    test('keys page in creation order after a cursor, filtered by status and a literal name prefix', async () => {
      for (const [i, name] of ['team_a', 'team%b', 'teamxc', 'other', 'team_d'].entries()) {
        await store.keys.create(testNewKey(`key_${i}`, { name, now: T0 + i }));
      }
      await store.keys.revoke('key_4', T0);
      const ids = async (q: Parameters<Store['keys']['page']>[0]) => (await store.keys.page(q)).map((k) => k.id);
      assert.deepEqual(await ids({ limit: 10 }), ['key_0', 'key_1', 'key_2', 'key_3', 'key_4']);
      assert.deepEqual(await ids({ limit: 2, after: { createdAt: new Date(T0 + 1).toISOString(), id: 'key_1' } }), ['key_2', 'key_3']);
      assert.deepEqual(await ids({ namePrefix: 'team_', limit: 10 }), ['key_0', 'key_4'], '_ is not a wildcard');
      assert.deepEqual(await ids({ namePrefix: 'team%', limit: 10 }), ['key_1'], '% is not a wildcard');
      assert.deepEqual(await ids({ status: 'revoked', limit: 10 }), ['key_4']);
      assert.deepEqual(await ids({ status: 'active', namePrefix: 'team', limit: 10 }), ['key_0', 'key_1', 'key_2']);
      // Through the operation: cursors chain to the same order, once each.
      const seen: string[] = [];
      let page = await listKeys(store, CONFIG, { limit: 2 });
      for (;;) {
        seen.push(...page.data.map((k) => String(k.id)));
        if (!page.next_cursor) break;
        page = await listKeys(store, CONFIG, { limit: 2, after: page.next_cursor });
      }
      assert.deepEqual(seen, ['key_0', 'key_1', 'key_2', 'key_3', 'key_4']);
    });

    test('a credit moves the balance with one entry, once per request id; it never overdraws; unknown keys are missing', async () => {
      await store.keys.create(testNewKey('key_a', { initialBalance: 1_000, now: T0 }));
      const credit = { keyId: 'key_a', kind: 'topup', amount: 500, requestId: 'idem_1', note: 'inv 1', now: T0 + 1 } as const;
      assert.equal(await store.accounts.credit(credit), 'applied');
      assert.equal(await store.accounts.credit(credit), 'duplicate');
      assert.equal(await store.accounts.credit({ ...credit, keyId: 'key_nope' }), 'missing');
      assert.equal(await store.accounts.credit({ ...credit, kind: 'adjust', amount: -1_501, requestId: 'adj_1', note: 'too much' }), 'overdraw');
      await store.ledger.placeHold({ requestId: 'h1', keyId: 'key_a', amount: 500, now: T0, expiresAt: T0 + 60_000, budget: { limit: null, periodStart: 0 } });
      assert.equal(await store.accounts.credit({ ...credit, kind: 'adjust', amount: -1_001, requestId: 'adj_2', note: 'held money is not available' }), 'overdraw');
      assert.equal(await store.accounts.credit({ ...credit, kind: 'adjust', amount: -1_000, requestId: 'adj_3', note: 'refund' }), 'applied');
      const key = (await store.keys.get('key_a'))!;
      assert.deepEqual([key.balance, key.held], [500, 500]);
      const audit = await store.ledger.audit('key_a');
      assert.deepEqual(audit.cached, audit.derived, 'cached figures equal the entries');
      const entries = await store.keys.entries({ keyId: 'key_a', limit: 10 });
      assert.deepEqual(
        entries.map((x) => [x.kind, x.amount, x.requestId, x.note]),
        [
          ['adjust', -1_000, 'adj_3', 'refund'],
          ['hold', 500, 'h1', null],
          ['topup', 500, 'idem_1', 'inv 1'],
          ['topup', 1_000, 'topup-key_a', null],
        ],
      );
      assert.deepEqual((await store.keys.entries({ keyId: 'key_a', beforeId: entries[1]!.id, limit: 10 })).map((x) => x.id), [entries[2]!.id, entries[3]!.id]);
      const page = await listLedger(store, 'key_a', { limit: 3 });
      assert.equal(page.has_more, true);
      const rest = await listLedger(store, 'key_a', { limit: 3, after: page.next_cursor });
      assert.deepEqual([...page.data, ...rest.data].map((x) => x.id), entries.map((x) => x.id));
    });

    test('update changes the fields given in one statement; rotate replaces the secret only', async () => {
      await store.keys.create(testNewKey('key_a', { initialBalance: 7, now: T0 }));
      const before = (await store.keys.get('key_a'))!;
      const changed = (await store.keys.update('key_a', { name: 'renamed', allowedModels: ['m'], metadata: { plan: 'pro' }, rpm: 5, expiresAt: T0 + HOUR }))!;
      assert.deepEqual([changed.name, changed.allowedModels, changed.metadata, changed.limits.rpm, changed.expiresAt], ['renamed', ['m'], { plan: 'pro' }, 5, T0 + HOUR]);
      assert.deepEqual(await store.keys.update('key_a', {}), changed, 'an empty change changes nothing');
      assert.equal(await store.keys.update('key_nope', { name: 'x' }), undefined);
      const rotated = (await store.keys.rotate('key_a', 'tg-newnewn', 'f'.repeat(64)))!;
      assert.deepEqual({ ...rotated, prefix: before.prefix }, { ...changed });
      assert.equal(rotated.prefix, 'tg-newnewn');
      assert.equal((await store.keys.findByHash('f'.repeat(64)))!.id, 'key_a');
    });

    test('usage rows page newest first by insertion; a walk sees each row once while rows are written concurrently', async () => {
      await store.keys.create(testNewKey('key_a', { initialBalance: 1_000_000_000, now: T0 }));
      await store.keys.create(testNewKey('key_b', { initialBalance: 1_000_000_000, now: T0 }));
      // Times out of insertion order: the cursor follows insertion, so a late row with an early time is not skipped.
      for (let i = 0; i < 12; i++) await record(row(`r${i}`, i % 3 === 0 ? 'key_b' : 'key_a', T0 + (i % 2 === 0 ? i : 100 - i)));
      const first = await store.usage.page({ limit: 5 });
      assert.deepEqual(first.map((r) => r.record.requestId), ['r11', 'r10', 'r9', 'r8', 'r7']);
      assert.deepEqual((await store.usage.page({ limit: 2, beforeSeq: first[4]!.seq })).map((r) => r.record.requestId), ['r6', 'r5']);
      assert.deepEqual((await store.usage.page({ keyId: 'key_b', limit: 10 })).map((r) => r.record.requestId), ['r9', 'r6', 'r3', 'r0']);
      const walked: string[] = [];
      let writes = 0;
      const writer = (async () => {
        for (let i = 0; i < 20; i++) {
          await record(row(`new${i}`, 'key_a', T0 + 50));
          writes += 1;
        }
      })();
      const reader = (async () => {
        let page = await listUsage(store, { limit: 3 });
        for (;;) {
          walked.push(...page.data.map((r) => String(r.request_id)));
          if (!page.next_cursor) break;
          page = await listUsage(store, { limit: 3, after: page.next_cursor });
        }
      })();
      await Promise.all([writer, reader]);
      assert.equal(writes, 20);
      assert.equal(new Set(walked).size, walked.length, 'no row twice');
      for (let i = 0; i < 12; i++) assert.ok(walked.includes(`r${i}`), `r${i}, there before the walk, was seen`);
      // An export reads a page at a time: never more than one page (plus the look-ahead row) at once.
      const all: string[] = [];
      const pageSizes: number[] = [];
      const paged = { ...store, usage: { ...store.usage, page: (q: Parameters<Store['usage']['page']>[0]) => (pageSizes.push(q.limit), store.usage.page(q)) } };
      for await (const usage of walkUsage(paged, {}, 7)) all.push(usage.requestId);
      assert.equal(all.length, 32);
      assert.equal(new Set(all).size, 32);
      assert.deepEqual(pageSizes, [8, 8, 8, 8, 8]);
    });

    test('usage filters and totals by key, model, provider, UTC day and hour', async () => {
      await store.keys.create(testNewKey('key_a', { initialBalance: 1_000_000_000, now: T0 }));
      await store.keys.create(testNewKey('key_b', { initialBalance: 1_000_000_000, now: T0 }));
      const day = Math.floor(T0 / (24 * HOUR)) * 24 * HOUR;
      await record(row('a', 'key_a', day + 1, { cost: 1_000 }));
      await record(row('b', 'key_a', day + HOUR + 2, { model: 'm2', provider: 'p2', cost: 3_000 }));
      await record(row('c', 'key_b', day + 24 * HOUR, { status: 502, cost: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 }));
      const totals = (requests: number, errors: number, cost: number) => ({
        requests,
        errors,
        inputTokens: 10 * (requests - errors),
        cachedInputTokens: 2 * (requests - errors),
        outputTokens: 5 * (requests - errors),
        reasoningTokens: 1 * (requests - errors),
        cost,
      });
      assert.deepEqual(await store.usage.summarize({}, 'key'), [
        { group: 'key_a', ...totals(2, 0, 4_000) },
        { group: 'key_b', ...totals(1, 1, 0) },
      ]);
      assert.deepEqual(await store.usage.summarize({}, 'model'), [
        { group: 'm2', ...totals(1, 0, 3_000) },
        { group: 'm1', ...totals(2, 1, 1_000) },
      ]);
      assert.deepEqual(await store.usage.summarize({ keyId: 'key_a' }, 'provider'), [
        { group: 'p2', ...totals(1, 0, 3_000) },
        { group: 'p1', ...totals(1, 0, 1_000) },
      ]);
      assert.deepEqual(await store.usage.summarize({}, 'day'), [
        { group: day, ...totals(2, 0, 4_000) },
        { group: day + 24 * HOUR, ...totals(1, 1, 0) },
      ]);
      assert.deepEqual((await store.usage.summarize({ since: day, until: day + 24 * HOUR }, 'hour')).map((t) => t.group), [day, day + HOUR]);
      assert.deepEqual(await store.usage.summarize({ status: 418 }, 'hour'), []);
      assert.deepEqual((await store.usage.page({ model: 'm2', provider: 'p2', status: 200, since: day + HOUR, until: day + 2 * HOUR, limit: 5 })).map((r) => r.record.requestId), ['b']);
    });
  });
}
