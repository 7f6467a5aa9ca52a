// The notification scan on PostgreSQL never holds an account's or a key's row lock while the gateway goes
// about other work (src/storage/postgres/webhook-store.ts): between any two of the scan's statements,
// another connection takes the row at once. The ledger's group commit waits for such a lock at most
// lock_timeout (1 s in the gateway); a scan whose transaction stayed open across round trips, on an event
// loop saturated by 500 concurrent streams, once made a batch of holds fail with 503.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { openPostgres, type PostgresPool } from '../../src/storage/postgres/connection.js';
import { PostgresWebhookStore } from '../../src/storage/postgres/webhook-store.js';
import { openStore } from '../../src/storage/open-store.js';
import type { Store } from '../../src/storage/types.js';
import { testNewKey } from '../support/key-fixture.js';
import { freshPgSchema, postgresSkipReason, type PgSchema } from '../support/postgres.js';

const USD = 1_000_000_000;
const T0 = 1_750_000_000_000;
const skip = await postgresSkipReason();

const sqlOf = (query: unknown): string => (typeof query === 'string' ? query : ((query as { text?: string } | undefined)?.text ?? ''));

/** `pool`, calling `between(sql)` after each statement it (or a client it lends) has run, before the caller goes on. */
function observed(pool: PostgresPool, between: (sql: string) => Promise<void>): PostgresPool {
  const watch = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(object, property) {
        if (property === 'query') {
          return async (...args: unknown[]) => {
            const result = await (object as unknown as { query: (...a: unknown[]) => Promise<unknown> }).query(...args);
            await between(sqlOf(args[0]));
            return result;
          };
        }
        if (property === 'connect') return async () => watch(await (object as unknown as PostgresPool).connect());
        const value: unknown = Reflect.get(object, property);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(object) : value;
      },
    });
  return watch(pool);
}

describe('PostgreSQL: the notification scan and the ledger’s row locks', { skip }, () => {
  let schema: PgSchema;
  let store: Store;
  let pool: PostgresPool;
  let prober: pg.Client;

  before(async () => {
    schema = await freshPgSchema();
    store = await openStore(schema.url);
    pool = await openPostgres(schema.url, { busyTimeoutMs: 1_000, maxConnections: 2 });
    prober = new pg.Client({ connectionString: schema.url });
    await prober.connect();
  });
  after(async () => {
    await prober?.end();
    await pool?.end();
    await store?.close();
    await schema?.drop();
  });

  /** Whether another connection can lock `table`'s row `id` right now (it waits 50 ms at most). */
  async function lockable(table: 'accounts' | 'api_keys', id: string): Promise<boolean> {
    await prober.query('BEGIN');
    try {
      await prober.query("SET LOCAL lock_timeout = '50ms'");
      await prober.query(`SELECT 1 FROM ${table} WHERE id = $1 FOR UPDATE`, [id]);
      return true;
    } catch (error) {
      if ((error as { code?: string }).code === '55P03') return false; // lock_not_available
      throw error;
    } finally {
      await prober.query('ROLLBACK');
    }
  }

  test('between any two of its statements, the flipped account and key rows are free; its events are written once', async () => {
    await store.accounts.create({ id: 'acct_low', name: 'low', initialBalance: 1 * USD, topupRequestId: 'open-low', now: T0 });
    await store.keys.create(testNewKey('key_soon', { accountId: 'acct_low', now: T0, expiresAt: T0 + 2 * 86_400_000 }));
    const held: string[] = [];
    let statements = 0;
    const scanner = new PostgresWebhookStore(
      observed(pool, async (sql) => {
        statements++;
        if (!(await lockable('accounts', 'acct_low'))) held.push(`account row locked after: ${sql.slice(0, 60)}`);
        if (!(await lockable('api_keys', 'key_soon'))) held.push(`key row locked after: ${sql.slice(0, 60)}`);
      }),
    );
    const scan = { now: T0 + 1, balanceLow: 5 * USD, keyBudget: null, keyBudgetPeriod: 'month' as const };
    assert.equal(await scanner.scan(scan), 2, 'balance.low and key.expiring');
    assert.ok(statements >= 4, `the scan ran ${statements} statements`);
    assert.deepEqual(held, []);
    assert.equal(await scanner.scan({ ...scan, now: T0 + 2 }), 0, 'each crossing announced once');
    const types = (await store.webhooks.page({ limit: 10 })).map((e) => e.type).sort();
    assert.deepEqual(types, ['balance.low', 'key.expiring']);
  });
});
