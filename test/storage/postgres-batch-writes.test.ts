// A batch runs only the closing writes it has rows for (migration 10): a statement costs PostgreSQL its
// executor start-up, constraint and trigger setup even when it touches no row, and at low load a batch
// carries one operation of one kind. Observed with statement-level triggers, which fire once per statement
// run — with or without rows — and log the table and the kind of write.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import pg from 'pg';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import type { Store } from '../../src/storage/types.js';
import { testNewKey } from '../support/key-fixture.js';
import { testUsage } from '../support/usage-fixture.js';
import { freshPgSchema, postgresSkipReason, type PgSchema } from '../support/postgres.js';

const skip = await postgresSkipReason();
const NO_BUDGET = { limit: null, periodStart: 0 };
const WATCHED = ['holds', 'ledger_entries', 'usage_records', 'api_keys', 'accounts'];

describe('PostgreSQL group commit: a batch skips the writes it has no row for', { skip }, () => {
  let schema: PgSchema;
  let store: Store;
  let client: pg.Client;

  beforeEach(async () => {
    schema = await freshPgSchema();
    store = await openPostgresStore(schema.url, { maxConnections: 2 });
    client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    await store.keys.create(testNewKey('key_a', { initialBalance: 10_000, now: Date.now() }));
    await client.query(`
      CREATE TABLE statement_log (n BIGSERIAL, tbl TEXT, op TEXT);
      CREATE FUNCTION log_statement() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO statement_log (tbl, op) VALUES (TG_TABLE_NAME, TG_OP); RETURN NULL; END $$;
    `);
    for (const table of WATCHED) {
      await client.query(`CREATE TRIGGER log_${table} AFTER INSERT OR UPDATE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION log_statement()`);
    }
  });
  afterEach(async () => {
    await client.end();
    await store.close();
    await schema.drop();
  });

  /** The statements run on the watched tables by `action` (one batch), as "table op", sorted. */
  async function statementsOf(action: () => Promise<unknown>): Promise<string[]> {
    await client.query('TRUNCATE statement_log');
    await action();
    const { rows } = await client.query<{ s: string }>("SELECT tbl || ' ' || op AS s FROM statement_log ORDER BY s");
    return rows.map((r) => r.s);
  }

  const hold = (requestId: string, amount: number) => {
    const now = Date.now();
    return store.ledger.placeHold({ requestId, keyId: 'key_a', amount, now, expiresAt: now + 600_000, budget: NO_BUDGET });
  };

  test('a hold alone inserts the hold and its entry and updates the key and its account; it updates no hold and writes no usage', async () => {
    assert.deepEqual(await statementsOf(() => hold('req_1', 1_000)), ['accounts UPDATE', 'api_keys UPDATE', 'holds INSERT', 'ledger_entries INSERT']);
  });

  test('a settlement alone updates the hold, the key and its account, writes its entries and usage; it inserts no hold', async () => {
    await hold('req_1', 1_000);
    const now = Date.now();
    const settled = await statementsOf(() => store.ledger.settle({ requestId: 'req_1', cost: 700, usage: testUsage('req_1', 700, { time: now }), now, budget: NO_BUDGET }));
    assert.deepEqual(settled, ['accounts UPDATE', 'api_keys UPDATE', 'holds UPDATE', 'ledger_entries INSERT', 'usage_records INSERT']);
    const { rows } = await client.query<{ balance: string; held: string; key_held: string }>(
      "SELECT a.balance, a.held, k.held AS key_held FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.id = 'key_a'",
    );
    assert.deepEqual(rows[0], { balance: '9300', held: '0', key_held: '0' });
  });

  test('a refused hold and a second settlement of the same request write nothing', async () => {
    assert.deepEqual(await statementsOf(() => hold('req_big', 50_000)), []);
    await hold('req_1', 1_000);
    const now = Date.now();
    await store.ledger.settle({ requestId: 'req_1', cost: 700, usage: testUsage('req_1', 700, { time: now }), now, budget: NO_BUDGET });
    const again = await statementsOf(() => store.ledger.settle({ requestId: 'req_1', cost: 700, usage: testUsage('req_1', 700, { time: now }), now, budget: NO_BUDGET }));
    assert.deepEqual(again, []);
  });

  test('a batch carrying both kinds runs every write once', async () => {
    await hold('req_1', 1_000);
    const now = Date.now();
    // Submitted in one event-loop turn, so they go as one batch.
    const both = await statementsOf(() =>
      Promise.all([hold('req_2', 1_000), store.ledger.settle({ requestId: 'req_1', cost: 700, usage: testUsage('req_1', 700, { time: now }), now, budget: NO_BUDGET })]),
    );
    assert.deepEqual(both, ['accounts UPDATE', 'api_keys UPDATE', 'holds INSERT', 'holds UPDATE', 'ledger_entries INSERT', 'usage_records INSERT']);
  });
});
