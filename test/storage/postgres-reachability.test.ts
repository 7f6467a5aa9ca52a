// What the PostgreSQL pool tells about reaching the database (telemetry/reachability.ts logs it): a
// refused connection, one that never answers (said as such, not as "terminated"), a connection lost under
// a pool, and connecting again. The first two need no PostgreSQL; the last one does.
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { observedClient } from '../../src/storage/postgres/connection.js';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import type { ReachabilityObserver } from '../../src/storage/types.js';
import { closedPort } from '../support/e2e.js';
import { startPgFaultProxy } from '../support/pg-fault-proxy.js';
import { freshPgSchema, postgresSkipReason, TEST_PG_URL } from '../support/postgres.js';

type Event = { failed: string } | 'succeeded';

function observer(): ReachabilityObserver & { events: Event[] } {
  const events: Event[] = [];
  return {
    events,
    failed: (error) => void events.push({ failed: (error as Error).message }),
    succeeded: () => void events.push('succeeded'),
  };
}

function poolAt(url: string, seen: ReachabilityObserver, timeoutMs = 5_000): pg.Pool {
  return new pg.Pool({ connectionString: url, connectionTimeoutMillis: timeoutMs, Client: observedClient(seen, timeoutMs) });
}

describe('the pool reports reaching PostgreSQL', () => {
  const silent = new Set<Socket>();
  const blackHole = createServer((socket) => void silent.add(socket));
  after(async () => {
    for (const socket of silent) socket.destroy();
    await new Promise<void>((resolve) => blackHole.close(() => resolve()));
  });

  test('a refused connection is a failure with its cause; the query still gets its error', async () => {
    const seen = observer();
    const pool = poolAt(`postgres://u:pw@127.0.0.1:${await closedPort()}/db`, seen);
    try {
      await assert.rejects(pool.query('SELECT 1'), /ECONNREFUSED/);
      assert.equal(seen.events.length, 1);
      assert.match((seen.events[0] as { failed: string }).failed, /ECONNREFUSED/);
    } finally {
      await pool.end();
    }
  });

  test('a server that never answers is a failure that says so, after the connection timeout', async () => {
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    const { port } = blackHole.address() as { port: number };
    const seen = observer();
    const pool = poolAt(`postgres://u:pw@127.0.0.1:${port}/db`, seen, 300);
    try {
      await assert.rejects(pool.query('SELECT 1'));
      assert.deepEqual(seen.events, [{ failed: 'no connection within 300 ms (Connection terminated unexpectedly)' }]);
    } finally {
      await pool.end();
    }
  });
});

describe('the store reports PostgreSQL going and coming back', { skip: await postgresSkipReason() }, () => {
  test('an idle connection lost is a failure; a connection opened again is the answer', async () => {
    const proxy = await startPgFaultProxy(TEST_PG_URL);
    const schema = await freshPgSchema();
    const seen = observer();
    const store = await openPostgresStore(proxy.urlFor(schema.url), { maxConnections: 2, reachability: seen });
    try {
      assert.deepEqual(seen.events, ['succeeded'], 'opening the store (its migrations) connected');
      await store.probe.ping();
      await proxy.takeDown();
      await assert.rejects(store.probe.ping());
      assert.ok(seen.events.length >= 2, JSON.stringify(seen.events));
      assert.ok(seen.events.slice(1).every((e) => e !== 'succeeded'), `only failures while it is down: ${JSON.stringify(seen.events)}`);
      await proxy.bringBack();
      await store.probe.ping();
      assert.equal(seen.events.at(-1), 'succeeded');
    } finally {
      await store.close();
      await proxy.close();
      await schema.drop();
    }
  });
});
