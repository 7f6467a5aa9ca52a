// Group commit: writes queued in one event-loop turn share one transaction, each stays atomic on its
// own, and callers hear back only after the commit.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteFile } from '../../../src/storage/sqlite/driver.js';
import { openSqlite } from '../../../src/storage/sqlite/connection.js';
import { WriteBatcher } from '../../../src/storage/sqlite/write-batcher.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { testNewKey } from '../../support/key-fixture.js';

function scratchDb() {
  const db = openSqliteFile(':memory:');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  return db;
}

describe('WriteBatcher', () => {
  test('runs every write queued in the same turn in one transaction', async () => {
    const db = scratchDb();
    const batcher = new WriteBatcher(db);
    const commits: number[] = [];
    const insert = db.prepare('INSERT INTO t (id, v) VALUES (?, ?)');
    const results = await Promise.all(
      [1, 2, 3].map((id) => batcher.enqueue(() => {
        commits.push(db.inTransaction ? 1 : 0);
        return insert.run(id, `v${id}`).changes;
      })),
    );
    assert.deepEqual(results, [1, 1, 1]);
    assert.deepEqual(commits, [1, 1, 1]);
    assert.equal((db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n, 3);
  });

  test('rolls back only the write that throws; the others commit and resolve', async () => {
    const db = scratchDb();
    const told: string[] = [];
    const batcher = new WriteBatcher(db, { failed: () => void told.push('failed'), succeeded: () => void told.push('succeeded') });
    const insertTwice = db.transaction((id: number) => {
      db.prepare('INSERT INTO t (id, v) VALUES (?, ?)').run(id, 'first');
      db.prepare('INSERT INTO t (id, v) VALUES (?, ?)').run(id, 'duplicate'); // violates the primary key
    });
    const good = batcher.enqueue(() => db.prepare('INSERT INTO t (id, v) VALUES (?, ?)').run(1, 'ok').changes);
    const bad = batcher.enqueue(() => insertTwice(2));
    const alsoGood = batcher.enqueue(() => db.prepare('INSERT INTO t (id, v) VALUES (?, ?)').run(3, 'ok').changes);
    assert.equal(await good, 1);
    await assert.rejects(bad, /UNIQUE|PRIMARY KEY/);
    assert.equal(await alsoGood, 1);
    assert.deepEqual(told, ['succeeded'], "one write's own error says nothing about the database");
    const rows = db.prepare('SELECT id, v FROM t ORDER BY id').all();
    assert.deepEqual(rows, [
      { id: 1, v: 'ok' },
      { id: 3, v: 'ok' },
    ]);
  });

  test('a bare write that fails half-way is undone alone: the batch runs again with a savepoint per write', async () => {
    const db = scratchDb();
    const batcher = new WriteBatcher(db);
    const runs = { before: 0, failing: 0, after: 0 };
    const insert = db.prepare('INSERT INTO t (id, v) VALUES (?, ?)');
    // No transaction function of its own: its first insert lands, its second breaks the primary key.
    const halfWay = () => {
      runs.failing += 1;
      insert.run(20, 'first half');
      insert.run(20, 'second half');
    };
    const before = batcher.enqueue(() => (runs.before += 1, insert.run(10, 'before').changes));
    const failing = batcher.enqueue(halfWay);
    const after = batcher.enqueue(() => (runs.after += 1, insert.run(30, 'after').changes));
    assert.equal(await before, 1);
    await assert.rejects(failing, /UNIQUE|PRIMARY KEY/);
    assert.equal(await after, 1);
    assert.deepEqual(db.prepare('SELECT id, v FROM t ORDER BY id').all(), [
      { id: 10, v: 'before' },
      { id: 30, v: 'after' },
    ], 'the failing write left nothing, the others are written once');
    // The bare run stopped at the failure and was rolled back; the guarded run did every write once more.
    assert.deepEqual(runs, { before: 2, failing: 2, after: 1 });
  });

  test('rejects every write of a batch whose transaction cannot start, writes none of them, and says the database cannot take writes until one commits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-batcher-'));
    try {
      const file = join(dir, 'db.sqlite');
      const db = openSqlite(file, 50);
      db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
      const other = openSqliteFile(file);
      other.exec('BEGIN EXCLUSIVE');
      const told: string[] = [];
      const batcher = new WriteBatcher(db, { failed: (error) => void told.push(`failed ${(error as { code: string }).code}`), succeeded: () => void told.push('succeeded') });
      const writes = [1, 2].map((id) => batcher.enqueue(() => db.prepare('INSERT INTO t (id, v) VALUES (?, ?)').run(id, 'x')));
      for (const write of writes) await assert.rejects(write, /locked|busy/i);
      assert.deepEqual(told, ['failed SQLITE_BUSY'], 'the database cannot take writes: said once per batch');
      other.exec('ROLLBACK');
      other.close();
      assert.equal((db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n, 0);
      await batcher.enqueue(() => db.prepare('INSERT INTO t (id, v) VALUES (?, ?)').run(3, 'x'));
      assert.deepEqual(told, ['failed SQLITE_BUSY', 'succeeded'], 'a batch that commits: it answers again');
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('admits holds from one batch in arrival order, never past the balance', async () => {
    const store = openSqliteStore(':memory:');
    try {
      await store.keys.create(testNewKey('key_a', { initialBalance: 1_000 }));
      // Ten holds of 300 queued in the same turn: the first three fit, the rest see them.
      const admissions = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          store.ledger.placeHold({ requestId: `r${i}`, keyId: 'key_a', amount: 300, now: 0, expiresAt: 60_000, budget: { limit: null, periodStart: 0 } }),
        ),
      );
      assert.deepEqual(
        admissions.map((a) => a.admitted),
        [true, true, true, false, false, false, false, false, false, false],
      );
      assert.deepEqual(admissions[3], { admitted: false, reason: 'balance', available: 100, budgetUsed: 900, keyActive: true });
      const audit = await store.ledger.audit('key_a');
      assert.deepEqual(audit.cached, { balance: 1_000, held: 900, spent: 0 });
      assert.deepEqual(audit.derived, audit.cached);
    } finally {
      await store.close();
    }
  });
});
