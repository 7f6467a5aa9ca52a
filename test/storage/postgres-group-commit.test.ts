// PostgreSQL group commit under faults: the connection carrying a batch is cut before the batch reaches
// the server (nothing ran) or after the server committed it (the answer is lost), or its backend is
// terminated while the batch waits for a lock. Every request of the batch must then be failed or
// retried exactly once: no hold admitted twice, no settlement lost or charged twice, and the cached
// figures always equal the ones derived from the append-only entries.
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import pg from 'pg';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import type { Store } from '../../src/storage/types.js';
import { testNewKey } from '../support/key-fixture.js';
import { testUsage } from '../support/usage-fixture.js';
import { startPgFaultProxy, type PgFaultProxy } from '../support/pg-fault-proxy.js';
import { freshPgSchema, postgresSkipReason, TEST_PG_URL, type PgSchema } from '../support/postgres.js';

const skip = await postgresSkipReason();
const NO_BUDGET = { limit: null, periodStart: 0 };
const AMOUNT = 1_000;
const TTL = 600_000;

describe('PostgreSQL group commit: a batch whose connection fails', { skip }, () => {
  let proxy: PgFaultProxy;
  let schema: PgSchema;
  let store: Store;
  let reader: pg.Pool;

  before(async () => {
    proxy = await startPgFaultProxy(TEST_PG_URL);
  });
  after(async () => {
    await proxy?.close();
  });
  beforeEach(async () => {
    schema = await freshPgSchema();
    store = await openPostgresStore(proxy.urlFor(schema.url), { maxConnections: 4 });
    reader = new pg.Pool({ connectionString: schema.url, max: 2 });
  });
  afterEach(async () => {
    await store.close();
    await reader.end();
    await schema.drop();
  });

  async function count(sql: string, params: unknown[] = []): Promise<number> {
    return Number((await reader.query<{ n: string }>(sql, params)).rows[0]!.n);
  }

  /** Cached figures == derived ones, and the numbers of entries of each kind. */
  async function audit(): Promise<{ balance: number; held: number; spent: number; holds: number; captures: number; releases: number; usage: number }> {
    const figures = await store.ledger.audit('key_a');
    assert.deepEqual(figures.cached, figures.derived, 'cached balance/held/spent == derived from the entries');
    const entries = async (kind: string) => count("SELECT COUNT(*) AS n FROM ledger_entries WHERE key_id = 'key_a' AND kind = $1", [kind]);
    return {
      ...figures.cached,
      holds: await entries('hold'),
      captures: await entries('capture'),
      releases: await entries('release'),
      usage: await count("SELECT COUNT(*) AS n FROM usage_records WHERE key_id = 'key_a'"),
    };
  }

  const placeAll = (ids: string[]) =>
    Promise.all(ids.map((requestId) => store.ledger.placeHold({ requestId, keyId: 'key_a', amount: AMOUNT, now: Date.now(), expiresAt: Date.now() + TTL, budget: NO_BUDGET })));

  test('cut after the server committed a batch of 30 holds on a key covering 20: the retry replays it, exactly 20 admitted once each', async () => {
    await store.keys.create(testNewKey('key_a', { initialBalance: 20 * AMOUNT, now: Date.now() }));
    const ids = Array.from({ length: 30 }, (_, i) => `req_hold_${i}`);
    proxy.arm('after-answer');
    const before = { ...proxy.stats };
    const admissions = await placeAll(ids);
    assert.equal(proxy.stats.cuts - before.cuts, 1, 'the batch was cut once');
    assert.equal(proxy.stats.batches - before.batches, 2, 'sent twice: the cut one and its retry');
    assert.equal(await count('SELECT COUNT(*) AS n FROM ledger_batches'), 1, 'one batch for all 30 holds, committed once');
    assert.deepEqual(
      admissions.map((a) => a.admitted),
      ids.map((_, i) => i < 20),
      'admitted in arrival order until the balance ran out',
    );
    const state = await audit();
    assert.equal(state.holds, 20, 'one hold entry per admitted request, none twice');
    assert.equal(state.held, 20 * AMOUNT);
    assert.equal(await count("SELECT COUNT(*) AS n FROM holds WHERE status = 'active'"), 20);
  });

  test('cut before a batch of settlements and releases reached the server: the retry applies each exactly once', async () => {
    await store.keys.create(testNewKey('key_a', { initialBalance: 100 * AMOUNT, now: Date.now() }));
    const ids = Array.from({ length: 24 }, (_, i) => `req_settle_${i}`);
    assert.ok((await placeAll(ids)).every((a) => a.admitted));
    proxy.arm('before-request');
    const results = await Promise.all(
      ids.map((requestId, i) =>
        i % 3 === 0
          ? store.ledger.release(requestId, testUsage(requestId, 0), Date.now())
          : store.ledger.settle({ requestId, cost: 100 + i, usage: testUsage(requestId, 100 + i), now: Date.now(), budget: NO_BUDGET }).then((r) => r.outcome),
      ),
    );
    assert.deepEqual(
      results,
      ids.map((_, i) => (i % 3 === 0 ? 'released' : 'captured')),
    );
    const charged = ids.reduce((sum, _, i) => (i % 3 === 0 ? sum : sum + 100 + i), 0);
    const state = await audit();
    assert.equal(state.held, 0);
    assert.equal(state.captures, 16, 'one capture per settlement');
    assert.equal(state.releases, 24, 'one release entry per hold');
    assert.equal(state.usage, 24, 'one usage row per request');
    assert.equal(state.spent, charged);
    assert.equal(state.balance, 100 * AMOUNT - charged, 'conservation: initial == final + Σ charges');
  });

  test('cut after the server committed settlements: answered from the recorded batch, charged once, outcome and charge intact', async () => {
    await store.keys.create(testNewKey('key_a', { initialBalance: 100 * AMOUNT, now: Date.now() }));
    const ids = Array.from({ length: 10 }, (_, i) => `req_lost_${i}`);
    assert.ok((await placeAll(ids)).every((a) => a.admitted));
    proxy.arm('after-answer');
    const results = await Promise.all(ids.map((requestId) => store.ledger.settle({ requestId, cost: 250, usage: testUsage(requestId, 250), now: Date.now(), budget: NO_BUDGET })));
    for (const result of results) assert.deepEqual(result, { outcome: 'captured', charged: 250 }, 'not "duplicate": the retry got the first answer');
    const state = await audit();
    assert.equal(state.captures, 10);
    assert.equal(state.spent, 2_500);
    assert.equal(state.balance, 100 * AMOUNT - 2_500);
  });

  test('cut twice (the retry fails too): every request of the batch fails, and none of them was applied', async () => {
    await store.keys.create(testNewKey('key_a', { initialBalance: 100 * AMOUNT, now: Date.now() }));
    proxy.arm('before-request', 2);
    const outcomes = await Promise.allSettled(
      ['req_x1', 'req_x2', 'req_x3'].map((requestId) =>
        store.ledger.placeHold({ requestId, keyId: 'key_a', amount: AMOUNT, now: Date.now(), expiresAt: Date.now() + TTL, budget: NO_BUDGET }),
      ),
    );
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['rejected', 'rejected', 'rejected'],
    );
    const state = await audit();
    assert.deepEqual([state.holds, state.held], [0, 0], 'nothing was admitted');
    // The store works again afterwards, and the failed request ids can be admitted once.
    assert.ok((await placeAll(['req_x1', 'req_x2', 'req_x3'])).every((a) => a.admitted));
    assert.equal((await audit()).holds, 3);
  });

  test('the backend is terminated while its batch waits for the key lock: retried once, every hold admitted exactly once', async () => {
    await store.keys.create(testNewKey('key_a', { initialBalance: 100 * AMOUNT, now: Date.now() }));
    const blocker = await reader.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query("SELECT 1 FROM api_keys WHERE id = 'key_a' FOR UPDATE");
      const pending = placeAll(Array.from({ length: 15 }, (_, i) => `req_term_${i}`));
      // The batch's backend, waiting for the row lock the blocker holds.
      let pid: number | undefined;
      for (let i = 0; i < 200 && pid === undefined; i++) {
        const { rows } = await reader.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE query LIKE '%tollgate_commit_ledger_batch%' AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()",
        );
        pid = rows[0]?.pid;
        if (pid === undefined) await new Promise((r) => setTimeout(r, 25));
      }
      assert.ok(pid !== undefined, 'the batch waits for the lock');
      await reader.query('SELECT pg_terminate_backend($1)', [pid]);
      // Let the retry queue up behind the lock too, then release it.
      await new Promise((r) => setTimeout(r, 200));
      await blocker.query('COMMIT');
      const admissions = await pending;
      assert.ok(admissions.every((a) => a.admitted));
    } finally {
      blocker.release();
    }
    const state = await audit();
    assert.equal(state.holds, 15, 'one hold entry each');
    assert.equal(state.held, 15 * AMOUNT);
  });

  test('one operation the server rejects (a bad usage row) fails alone: the rest of its batch is applied once', async () => {
    await store.keys.create(testNewKey('key_a', { initialBalance: 100 * AMOUNT, now: Date.now() }));
    const ids = Array.from({ length: 6 }, (_, i) => `req_split_${i}`);
    assert.ok((await placeAll(ids)).every((a) => a.admitted));
    const outcomes = await Promise.allSettled(
      ids.map((requestId, i) => {
        const row = i === 2 ? { ...testUsage(requestId, 300), usageSource: 'bogus' as 'upstream' } : testUsage(requestId, 300);
        return store.ledger.settle({ requestId, cost: 300, usage: row, now: Date.now(), budget: NO_BUDGET });
      }),
    );
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled'],
    );
    const state = await audit();
    assert.equal(state.captures, 5, 'the five good settlements, once each');
    assert.equal(state.held, AMOUNT, 'the rejected one still holds (its hold will be settled again or expire)');
    assert.equal(state.spent, 1_500);
  });
});
