// The group commit releases a batch's key row locks before its commit reaches the disk, but answers only
// once it has (migration 9): no gateway may tell a client about a hold or a charge that a crash of the
// database could still take back. Observed through the WAL with pg_walinspect: the commit record of the
// transaction that wrote the hold must lie below the WAL flush position read right after the answer. That
// holds whatever else the server is writing (other tests' schemas, the background writer), so this file
// runs beside the others. And the batch function keeps its plan settings.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import pg from 'pg';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import type { Store } from '../../src/storage/types.js';
import { testNewKey } from '../support/key-fixture.js';
import { freshPgSchema, postgresSkipReason, TEST_PG_URL, type PgSchema } from '../support/postgres.js';

const skip = await postgresSkipReason();
const NO_BUDGET = { limit: null, periodStart: 0 };
const ROUNDS = 3;
if (!skip) await withWalInspect(TEST_PG_URL);

describe('PostgreSQL group commit: answers only once durable', { skip }, () => {
  let schema: PgSchema;
  let store: Store;
  let reader: pg.Client;

  beforeEach(async () => {
    schema = await freshPgSchema();
    store = await openPostgresStore(schema.url, { maxConnections: 2 });
    reader = new pg.Client({ connectionString: schema.url });
    await reader.connect();
  });
  afterEach(async () => {
    await reader.end();
    await store.close();
    await schema.drop();
  });

  test('when a hold is answered, the commit of its batch is already flushed to the WAL on disk', async () => {
    await store.keys.create(testNewKey('key_a', { initialBalance: 1_000_000, now: Date.now() }));
    for (let i = 0; i < ROUNDS; i++) {
      const from = await lsn(reader, 'pg_current_wal_insert_lsn()');
      const now = Date.now();
      const admission = await store.ledger.placeHold({ requestId: `req_${i}`, keyId: 'key_a', amount: 1_000, now, expiresAt: now + 600_000, budget: NO_BUDGET });
      assert.ok(admission.admitted);
      // Without the procedure's synchronous second commit, the batch's asynchronous commit stays
      // unflushed for up to wal_writer_delay (200 ms by default): far longer than this one query.
      const flushedAtAnswer = await lsn(reader, 'pg_current_wal_flush_lsn()');
      const commitEnd = await commitEndOf(reader, `req_${i}`, from);
      assert.ok(
        (await lsnAtMost(reader, commitEnd, flushedAtAnswer)) === true,
        `round ${i}: the batch committed up to ${commitEnd}, but only ${flushedAtAnswer} was on disk when the hold was answered`,
      );
    }
  });

  test('the batch function keeps its plan settings (a later CREATE OR REPLACE would silently drop them)', async () => {
    const { rows } = await reader.query<{ config: string[] }>("SELECT proconfig AS config FROM pg_proc WHERE proname = 'tollgate_ledger_batch' AND pronamespace = current_schema()::regnamespace");
    assert.equal(rows.length, 1);
    // This schema's (another schema's copy, a leftover benchmark's say, is not ours to judge).
    // Primary-key plans whatever the statistics say (migration 8), planned once per connection (migrations 9, 10).
    assert.deepEqual([...rows[0]!.config].sort(), ['enable_seqscan=off', 'plan_cache_mode=force_generic_plan']);
  });
});

/** An LSN the server reports now: pg_current_wal_insert_lsn() or pg_current_wal_flush_lsn(). */
async function lsn(client: pg.Client, expression: string): Promise<string> {
  const { rows } = await client.query<{ lsn: string }>(`SELECT ${expression} AS lsn`);
  return rows[0]!.lsn;
}

async function lsnAtMost(client: pg.Client, a: string, b: string): Promise<boolean> {
  const { rows } = await client.query<{ le: boolean }>('SELECT $1::pg_lsn <= $2::pg_lsn AS le', [a, b]);
  return rows[0]!.le;
}

/**
 * Where the COMMIT record of the transaction that inserted `requestId`'s hold ends in the WAL, searched
 * from `from` on. pg_walinspect reads only flushed WAL, so this waits (up to 5 s) for that record to be flushed.
 */
async function commitEndOf(client: pg.Client, requestId: string, from: string): Promise<string> {
  const { rows: holds } = await client.query<{ xid: string }>('SELECT xmin::text AS xid FROM holds WHERE request_id = $1', [requestId]);
  assert.equal(holds.length, 1, `the hold ${requestId} was written`);
  const xid = holds[0]!.xid;
  const deadline = Date.now() + 5_000;
  for (;; await new Promise((resolve) => setTimeout(resolve, 20))) {
    assert.ok(Date.now() < deadline, `no COMMIT record for transaction ${xid} (the hold ${requestId}) in the WAL flushed after ${from}`);
    const flushed = await lsn(client, 'pg_current_wal_flush_lsn()');
    // Other writers' unflushed WAL may lie between the flush position and `from`: nothing to read yet.
    if (await lsnAtMost(client, flushed, from)) continue;
    const { rows } = await client.query<{ end: string }>(
      `SELECT end_lsn::text AS end FROM public.pg_get_wal_records_info($1, $2)
        WHERE resource_manager = 'Transaction' AND record_type = 'COMMIT' AND xid::text = $3`,
      [from, flushed, xid],
    );
    if (rows.length === 1) return rows[0]!.end;
  }
}

/** pg_walinspect (PostgreSQL 15+, in the server's contrib) in the test database; created once, by whichever test run comes first. */
async function withWalInspect(url: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect SCHEMA public');
  } catch (error) {
    // Another run created it at the same moment (IF NOT EXISTS does not cover that race).
    if ((error as { code?: string }).code !== '23505') throw error;
  } finally {
    await admin.end();
  }
}
