// The operators' probes on PostgreSQL: one query each, from the pool (a pool that cannot connect fails
// within its connection timeout; the callers add their own deadline).
import type { Nano } from '../../billing/money.js';
import type { StoreProbe } from '../types.js';
import type { PostgresPool } from './connection.js';

export class PostgresProbe implements StoreProbe {
  constructor(private readonly pool: PostgresPool) {}

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async activeHolds(): Promise<{ count: number; amount: Nano }> {
    const { rows } = await this.pool.query<{ count: number; amount: number }>(
      "SELECT COUNT(*)::BIGINT AS count, COALESCE(SUM(amount), 0)::BIGINT AS amount FROM holds WHERE status = 'active'",
    );
    return { count: rows[0]!.count, amount: rows[0]!.amount };
  }
}
