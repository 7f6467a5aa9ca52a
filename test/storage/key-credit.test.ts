// The guard rails of a top-up or an adjustment (KeyStore.credit), on SQLite and PostgreSQL alike: a
// revoked key is refused and nothing moves; a balance past the ledger's maximum is refused and nothing
// moves; the refusal is decided under the key row's lock, so a revoke in progress is waited for and seen;
// a key's running totals past 2^53 nano-dollars still read.
import { createRequire } from 'node:module';
import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import { MAX_NANO } from '../../src/billing/money.js';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { SQLITE_DRIVER } from '../../src/storage/sqlite/driver.js';
import type { Credit, Store, UsageRecord } from '../../src/storage/types.js';
import { testNewKey } from '../support/key-fixture.js';
import { freshPgSchema, postgresSkipReason } from '../support/postgres.js';
import { storeDialects, type TestStore } from '../support/store-dialects.js';
import { waitFor } from '../support/e2e.js';

const T0 = 1_750_000_000_000;
const NO_BUDGET = { limit: null, periodStart: 0 };

let nextRequest = 0;
function credit(amount: number, overrides: Partial<Credit> = {}): Credit {
  return { keyId: 'key_a', kind: 'topup', amount, requestId: `credit-${++nextRequest}`, note: null, now: T0, ...overrides };
}

/** The figures and entries a refused credit must leave as they were. */
async function snapshot(store: Store, keyId = 'key_a') {
  const key = (await store.keys.get(keyId))!;
  const entries = await store.keys.entries({ keyId, limit: 1000 });
  return { balance: key.balance, held: key.held, spent: key.spent, status: key.status, entries: entries.map((e) => [e.kind, e.amount, e.requestId]) };
}

function usageOf(requestId: string, cost: number): UsageRecord {
  return {
    requestId,
    time: T0 + 1,
    keyId: 'key_a',
    model: 'm',
    provider: 'p',
    upstreamModel: 'm',
    status: 200,
    inputTokens: 1,
    cachedInputTokens: 0,
    outputTokens: 1,
    reasoningTokens: 0,
    cost,
    usageSource: 'upstream',
    attempts: [],
    endpoint: 'chat',
    errorCode: null,
    errorMessage: null,
    durationMs: 10,
    firstTokenMs: null,
    sessionId: null,
  };
}

for (const dialect of await storeDialects()) {
  describe(`${dialect.name}: credit guard rails`, { skip: dialect.skip }, () => {
    let store: TestStore;
    beforeEach(async () => {
      store = await dialect.open();
      await store.keys.create(testNewKey('key_a', { initialBalance: 5_000_000_000, now: T0 }));
    });
    afterEach(async () => {
      await store.close();
    });

    test('a top-up or an adjustment of either sign on a revoked key is refused and changes nothing', async () => {
      await store.keys.revoke('key_a', T0);
      const before = await snapshot(store);
      assert.equal(await store.accounts.credit(credit(1_000)), 'revoked');
      assert.equal(await store.accounts.credit(credit(1_000, { kind: 'adjust', note: 'goodwill' })), 'revoked');
      assert.equal(await store.accounts.credit(credit(-1_000, { kind: 'adjust', note: 'refund' })), 'revoked');
      assert.deepEqual(await snapshot(store), before);
    });

    test('an expired key may still be credited: its expiry can be extended', async () => {
      await store.keys.create(testNewKey('key_old', { initialBalance: 1_000, now: T0, expiresAt: T0 + 1 }));
      assert.equal(await store.accounts.credit(credit(500, { keyId: 'key_old', now: T0 + 10 })), 'applied');
      assert.equal((await store.keys.get('key_old'))!.balance, 1_500);
    });

    test('a credit applied before the key was revoked is still a duplicate, not a refusal, when retried', async () => {
      const first = credit(1_000);
      assert.equal(await store.accounts.credit(first), 'applied');
      await store.keys.revoke('key_a', T0);
      const before = await snapshot(store);
      assert.equal(await store.accounts.credit(first), 'duplicate');
      assert.deepEqual(await snapshot(store), before);
    });

    test('a credit up to the maximum applies and reads back exactly; one nano-dollar past it is refused and changes nothing', async () => {
      const room = MAX_NANO - 5_000_000_000;
      assert.equal(await store.accounts.credit(credit(room - 1)), 'applied');
      assert.equal((await store.keys.get('key_a'))!.balance, MAX_NANO - 1);
      const before = await snapshot(store);
      assert.equal(await store.accounts.credit(credit(2)), 'over_maximum');
      assert.equal(await store.accounts.credit(credit(2, { kind: 'adjust', note: 'x' })), 'over_maximum');
      assert.equal(await store.accounts.credit(credit(MAX_NANO)), 'over_maximum');
      assert.deepEqual(await snapshot(store), before);
      assert.equal(await store.accounts.credit(credit(1)), 'applied');
      assert.equal((await store.keys.get('key_a'))!.balance, MAX_NANO);
      assert.equal(await store.accounts.credit(credit(-MAX_NANO, { kind: 'adjust', note: 'all of it back' })), 'applied');
      assert.equal((await store.keys.get('key_a'))!.balance, 0);
    });

    test("a key's lifetime spend past 2^53 nano-dollars still reads, in the key, its audit and the usage totals", async () => {
      // Twice the maximum, topped up and spent: more than the safe integers hold (2 × MAX_NANO > 2^53).
      assert.equal(await store.accounts.credit(credit(MAX_NANO - 5_000_000_000)), 'applied');
      for (const round of [1, 2]) {
        const requestId = `spend-${round}`;
        assert.equal((await store.ledger.placeHold({ requestId, keyId: 'key_a', amount: MAX_NANO, now: T0, expiresAt: T0 + 600_000, budget: NO_BUDGET })).admitted, true);
        assert.equal((await store.ledger.settle({ requestId, cost: MAX_NANO, usage: usageOf(requestId, MAX_NANO), now: T0 + 1, budget: NO_BUDGET })).outcome, 'captured');
        if (round === 1) assert.equal(await store.accounts.credit(credit(MAX_NANO)), 'applied');
      }
      const key = (await store.keys.get('key_a'))!;
      assert.deepEqual([key.balance, key.held, key.spent], [0, 0, 2 * MAX_NANO]);
      const audit = await store.ledger.audit('key_a');
      assert.deepEqual(audit.cached, audit.derived);
      const [totals] = await store.usage.summarize({}, 'key');
      assert.equal(totals!.cost, 2 * MAX_NANO);
    });
  });
}

// The race itself: a revoke that has changed the key row but not committed yet holds the row's lock. A
// credit started then must wait for it and see the key revoked — a status read before taking the lock
// would still see it active and credit a revoked key.
describe('sqlite: a credit racing a revoke', () => {
  let dir: string;
  let store: Store;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-credit-race-'));
    store = openSqliteStore(join(dir, 'race.db'));
    await store.keys.create(testNewKey('key_a', { initialBalance: 1_000, now: T0 }));
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('waits for a revoke in progress on another connection and is refused', async () => {
    // Another connection (a `tollgate keys revoke` process) in a worker thread: it takes the write lock,
    // revokes, says so, and commits once this thread is about to credit (plus a moment to reach the lock;
    // the outcome does not depend on it — a credit that starts later sees the commit either way).
    const go = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(
      `const { workerData, parentPort } = require('node:worker_threads');
       const Database = require(workerData.driver);
       const db = new Database(workerData.file);
       db.exec('BEGIN IMMEDIATE');
       db.prepare("UPDATE api_keys SET status = 'revoked', revoked_at = 'now' WHERE id = 'key_a'").run();
       parentPort.postMessage('locked');
       Atomics.wait(workerData.go, 0, 0);
       Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
       db.exec('COMMIT');
       db.close();`,
      { eval: true, workerData: { file: join(dir, 'race.db'), go, driver: createRequire(import.meta.url).resolve(SQLITE_DRIVER) } },
    );
    const exited = new Promise((resolve, reject) => worker.once('exit', resolve).once('error', reject));
    await new Promise((resolve) => worker.once('message', resolve));
    Atomics.store(go, 0, 1);
    Atomics.notify(go, 0);
    assert.equal(await store.accounts.credit(credit(500)), 'revoked');
    await exited;
    assert.deepEqual(await snapshot(store), { balance: 1_000, held: 0, spent: 0, status: 'revoked', entries: [['topup', 1_000, 'topup-key_a']] });
  });
});

const pgSkip = await postgresSkipReason();
describe('postgres: a credit racing a revoke', { skip: pgSkip }, () => {
  let schema: Awaited<ReturnType<typeof freshPgSchema>>;
  let store: Store;
  let locker: pg.Client;
  beforeEach(async () => {
    schema = await freshPgSchema();
    store = await openPostgresStore(schema.url, { maxConnections: 4 });
    await store.keys.create(testNewKey('key_a', { initialBalance: 1_000, now: T0 }));
    locker = new pg.Client({ connectionString: schema.url });
    await locker.connect();
  });
  afterEach(async () => {
    await locker.end();
    await store.close();
    await schema.drop();
  });

  test('waits for a revoke in progress on another connection and is refused', async () => {
    const lockerPid = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    await locker.query('BEGIN');
    await locker.query("UPDATE api_keys SET status = 'revoked', revoked_at = 'now' WHERE id = 'key_a'");
    const pending = store.accounts.credit(credit(500));
    // Commit only once the credit is blocked behind the revoke's row lock.
    const observer = new pg.Client({ connectionString: schema.url });
    await observer.connect();
    try {
      const blocked = await waitFor(async () => {
        const { rows } = await observer.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))', [lockerPid]);
        return Number(rows[0]!.n) > 0;
      }, 5_000);
      assert.ok(blocked, 'the credit waits for the revoke');
    } finally {
      await observer.end();
    }
    await locker.query('COMMIT');
    assert.equal(await pending, 'revoked');
    assert.deepEqual(await snapshot(store), { balance: 1_000, held: 0, spent: 0, status: 'revoked', entries: [['topup', 1_000, 'topup-key_a']] });
  });
});
