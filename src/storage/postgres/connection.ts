// Opens a PostgreSQL pool (node-postgres) and applies migrations.
import pg from 'pg';
import type { ReachabilityObserver } from '../types.js';
import { postgresMigrations } from './migrations.js';

export type PostgresPool = pg.Pool;
export type PostgresClient = pg.PoolClient;

const INT8_OID = 20;

/**
 * BIGINT columns hold nano-dollars and epoch milliseconds; node-postgres returns them as strings by
 * default, and they are read as numbers. Every amount the ledger holds (a balance, a hold, a budget) is
 * at most MAX_NANO, far inside 2^53, so it reads exactly. Running totals are not bounded — a key's
 * lifetime `spent`, a usage summary's sum — and one past 2^53 nano (≈ $9,007,199) reads as the nearest
 * number, as SQLite gives it, instead of an error that would fail every request of a key that has spent
 * that much (docs/adr/0032-money-guard-rails.md).
 */
function parseInt8(text: string): number {
  return Number(text);
}

const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? parseInt8 : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

export interface PostgresOptions {
  /** How long to wait for a connection (and for a lock held by another transaction). */
  readonly busyTimeoutMs: number;
  readonly maxConnections: number;
  /** Told of every connection opened, refused or lost (the server's reachability log lines). */
  readonly reachability?: ReachabilityObserver | undefined;
}

export async function openPostgres(url: string, options: PostgresOptions): Promise<PostgresPool> {
  const connectionTimeoutMs = Math.max(options.busyTimeoutMs, 1_000);
  const pool = new pg.Pool({
    connectionString: url,
    types,
    max: options.maxConnections,
    connectionTimeoutMillis: connectionTimeoutMs,
    ...(options.reachability ? { Client: observedClient(options.reachability, connectionTimeoutMs) } : {}),
    // A row lock held by another process (a CLI top-up) is waited for at most this long, like SQLite's
    // busy_timeout; the request then fails with ledger_unavailable instead of hanging.
    lock_timeout: Math.trunc(options.busyTimeoutMs),
  });
  // An idle client's connection dropping (a PostgreSQL restart) must not crash the process: the pool
  // discards that client and the next query opens a new one.
  pool.on('error', () => {});
  try {
    await migrate(pool);
  } catch (error) {
    await pool.end();
    throw error;
  }
  return pool;
}

type ConnectCallback = ((err: Error) => void) | ((err: null, c: pg.Client) => void);

/**
 * The pool's connections, each telling `observer` whether it could connect and whether it was lost:
 * every query of the process goes through one of them, so this is the one place that sees PostgreSQL
 * go and come back. A failure costs nothing more than it already did; a query that succeeds costs nothing.
 */
export function observedClient(observer: ReachabilityObserver, connectionTimeoutMs: number): typeof pg.Client {
  return class ObservedClient extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      // A connection lost while in use or idle (the error also reaches the query it was running).
      this.on('error', (error: Error) => observer.failed(error));
    }

    override connect(): Promise<pg.Client>;
    override connect(callback: ConnectCallback): void;
    override connect(callback?: ConnectCallback): Promise<pg.Client> | void {
      const startedAt = Date.now();
      const settled = (error: Error | null | undefined): void => {
        if (!error) return observer.succeeded();
        // The pool gives up on a connection that does not answer by destroying its socket, which reads as
        // "Connection terminated unexpectedly": say what happened instead (with slack: timers may fire early).
        const timedOut = Date.now() - startedAt >= connectionTimeoutMs - 10;
        observer.failed(timedOut ? new Error(`no connection within ${connectionTimeoutMs} ms (${error.message})`) : error);
      };
      if (!callback) {
        return super.connect().then(
          (client) => {
            settled(undefined);
            return client;
          },
          (error: Error) => {
            settled(error);
            throw error;
          },
        );
      }
      super.connect(((error: Error | null, client?: pg.Client) => {
        settled(error);
        (callback as (error: Error | null, client?: pg.Client) => void)(error, client);
      }) as ConnectCallback);
    }
  };
}

/** Runs `work` in one transaction on one pooled connection; rolls back if it throws. */
export async function inTransaction<T>(pool: PostgresPool, work: (client: PostgresClient) => Promise<T>, begin = 'BEGIN'): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    try {
      await client.query('ROLLBACK');
    } catch (rollbackError) {
      broken = rollbackError as Error;
    }
    throw error;
  } finally {
    // A connection whose ROLLBACK failed is in an unknown state: destroy it instead of reusing it.
    client.release(broken);
  }
}

async function migrate(pool: PostgresPool): Promise<void> {
  await inTransaction(pool, async (client) => {
    // Serialises concurrent starts (two gateways, or serve and a CLI command) on this schema: the lock is
    // named by the schema, so gateways on other schemas of one database (tests, tenants) do not queue
    // behind each other. A start waits for another's migration (seconds for a fresh schema), not only
    // the pool's lock_timeout meant for a row a CLI command holds for a moment.
    await client.query("SET LOCAL lock_timeout = '60s'");
    await client.query("SELECT pg_advisory_xact_lock(hashtext('tollgate.schema_migrations.' || current_schema()))");
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
    const { rows } = await client.query<{ version: number }>('SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations');
    const current = rows[0]?.version ?? 0;
    for (const migration of postgresMigrations()) {
      if (migration.version <= current) continue;
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
        migration.version,
        migration.name,
        new Date().toISOString(),
      ]);
    }
  });
}
