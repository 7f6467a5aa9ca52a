// The PostgreSQL Store: one connection pool shared by the repositories. Several gateways may share one
// database: admission decides under the account's and the key's row locks, so their holds never overdraw
// an account nor pass a key's caps.
import type { Store, StoreOptions } from '../types.js';
import { PostgresAccountStore } from './account-store.js';
import { PostgresCodeStore } from './code-store.js';
import { openPostgres } from './connection.js';
import { PostgresIdempotencyStore } from './idempotency-store.js';
import { PostgresKeyStore } from './key-store.js';
import { PostgresLedgerStore } from './ledger-store.js';
import { PostgresPaymentStore } from './payment-store.js';
import { PostgresProbe } from './probe.js';
import { PostgresResponseStateStore } from './response-state-store.js';
import { PostgresUsageStore } from './usage-store.js';
import { PostgresWebhookStore } from './webhook-store.js';

export async function openPostgresStore(url: string, options: StoreOptions = {}): Promise<Store> {
  const pool = await openPostgres(url, { busyTimeoutMs: options.busyTimeoutMs ?? 5_000, maxConnections: options.maxConnections ?? 10, reachability: options.reachability });
  let closed: Promise<void> | undefined;
  const ledger = new PostgresLedgerStore(pool);
  const keys = new PostgresKeyStore(pool);
  return {
    accounts: new PostgresAccountStore(pool, () => keys.forgetRecent()),
    keys,
    codes: new PostgresCodeStore(pool, () => keys.forgetRecent()),
    ledger,
    usage: new PostgresUsageStore(pool),
    idempotency: new PostgresIdempotencyStore(pool),
    responses: new PostgresResponseStateStore(pool),
    webhooks: new PostgresWebhookStore(pool),
    payments: new PostgresPaymentStore(pool, () => keys.forgetRecent()),
    probe: new PostgresProbe(pool),
    close() {
      // Writes already queued still go to the database before the pool closes.
      closed ??= ledger.drained().then(() => pool.end());
      return closed;
    },
  };
}
