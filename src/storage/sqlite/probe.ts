// The operators' probes on SQLite: one query each, on the server's connection.
import type { Nano } from '../../billing/money.js';
import type { StoreProbe } from '../types.js';
import type { SqliteDatabase } from './connection.js';

export class SqliteProbe implements StoreProbe {
  private readonly statements;

  constructor(private readonly db: SqliteDatabase) {
    this.statements = {
      ping: db.prepare('SELECT 1'),
      // The partial index on active holds keeps this to the holds in flight, not the table's history.
      holds: db.prepare("SELECT COUNT(*) AS count, COALESCE(SUM(amount), 0) AS amount FROM holds WHERE status = 'active'"),
    };
  }

  async ping(): Promise<void> {
    if (!this.db.open) throw new Error('the database is closed');
    this.statements.ping.get();
  }

  async activeHolds(): Promise<{ count: number; amount: Nano }> {
    return this.statements.holds.get() as { count: number; amount: Nano };
  }
}
