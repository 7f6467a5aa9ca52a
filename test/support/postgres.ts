// PostgreSQL for the tests that need it (product.md §1): TOLLGATE_TEST_PG_URL, default the local server.
// Unreachable, those tests are skipped with the reason — except under CI=true, where that is a failure.
// Each test gets its own schema, so tests never see one another's rows and need no clean-up order.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { redactDatabaseUrl } from '../../src/storage/database-url.js';

export const TEST_PG_URL = process.env.TOLLGATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let reachable: Promise<string | undefined> | undefined;

/**
 * For `describe(name, { skip: await postgresSkipReason() }, ...)`: undefined when PostgreSQL answers,
 * else why the tests are skipped. Under CI=true it throws instead: CI must not pass by skipping.
 */
export async function postgresSkipReason(): Promise<string | undefined> {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: TEST_PG_URL, connectionTimeoutMillis: 3_000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return undefined;
    } catch (error) {
      return `PostgreSQL unreachable at ${redactDatabaseUrl(TEST_PG_URL)}: ${(error as Error).message}`;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  const reason = await reachable;
  if (reason && process.env.CI === 'true') throw new Error(`${reason} (CI=true: the PostgreSQL tests must run)`);
  return reason;
}

export interface PgSchema {
  /** TEST_PG_URL with this schema first on the search path: a database URL for the gateway or a store. */
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

/** Creates an empty schema `tollgate_test_<random>`. */
export async function freshPgSchema(): Promise<PgSchema> {
  const name = `tollgate_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE SCHEMA ${name}`);
  const url = new URL(TEST_PG_URL);
  url.searchParams.set('options', `-c search_path=${name}`);
  return {
    url: url.toString(),
    name,
    drop: () => adminQuery(`DROP SCHEMA IF EXISTS ${name} CASCADE`),
  };
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_PG_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
