// `npm run bench -- --postgres URL`: the gateway's ledger in a fresh PostgreSQL schema, dropped afterwards.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

async function run(url, sql) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function createBenchSchema(baseUrl) {
  const name = `tollgate_bench_${randomBytes(4).toString('hex')}`;
  await run(baseUrl, `CREATE SCHEMA ${name}`);
  const url = new URL(baseUrl);
  url.searchParams.set('options', `-c search_path=${name}`);
  return { url: url.toString(), drop: () => run(baseUrl, `DROP SCHEMA IF EXISTS ${name} CASCADE`) };
}
