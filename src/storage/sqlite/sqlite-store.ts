// The SQLite Store: one connection shared by the repositories; a change of an account's money or status
// makes the key store forget the key rows it keeps for a second (ADR 0027).
import type { Store, StoreOptions } from '../types.js';
import { SqliteAccountStore } from './account-store.js';
import { SqliteCodeStore } from './code-store.js';
import { openSqlite } from './connection.js';
import { SqliteIdempotencyStore } from './idempotency-store.js';
import { SqliteKeyStore } from './key-store.js';
import { SqlitePaymentStore } from './payment-store.js';
import { SqliteLedgerStore } from './ledger-store.js';
import { SqliteProbe } from './probe.js';
import { SqliteResponseStateStore } from './response-state-store.js';
import { SqliteUsageStore } from './usage-store.js';
import { SqliteWebhookStore } from './webhook-store.js';
import { WriteBatcher } from './write-batcher.js';

export function openSqliteStore(file: string, options: StoreOptions = {}): Store {
  const db = openSqlite(file, options.busyTimeoutMs ?? 5_000);
  const batcher = new WriteBatcher(db, options.reachability);
  const keys = new SqliteKeyStore(db);
  const forgetRecentKeys = () => keys.forgetRecent();
  return {
    accounts: new SqliteAccountStore(db, forgetRecentKeys),
    keys,
    codes: new SqliteCodeStore(db, forgetRecentKeys),
    ledger: new SqliteLedgerStore(db, batcher),
    usage: new SqliteUsageStore(db, batcher),
    idempotency: new SqliteIdempotencyStore(db, batcher),
    responses: new SqliteResponseStateStore(db, batcher),
    webhooks: new SqliteWebhookStore(db),
    payments: new SqlitePaymentStore(db, forgetRecentKeys),
    probe: new SqliteProbe(db),
    async close() {
      batcher.flush();
      if (db.open) db.close();
    },
  };
}
