// The webhook outbox on PostgreSQL (docs/adr/0052-signed-webhooks.md). A deliverer leases due rows with
// FOR UPDATE SKIP LOCKED: several gateways on one database never lease the same row, and none waits for
// another's rows. The scan's flips are conditional UPDATEs (the marker still as read): under READ
// COMMITTED a second scanner's UPDATE waits for the first's commit and then finds the marker moved.
import type { NewWebhookEvent, NotificationScan, WebhookAttemptResult, WebhookClaim, WebhookEventRecord, WebhookPageQuery, WebhookStore } from '../types.js';
import { accountFlips, keyFlips, SCAN_ACCOUNT_SQL, SCAN_KEY_SQL, type ScanAccountRow, type ScanKeyRow } from '../webhook-scan.js';
import {
  WEBHOOK_COLUMNS,
  WEBHOOK_RESEND_SET,
  webhookCompleteSql,
  webhookInsertSql,
  webhookInsertValues,
  webhookPageSql,
  webhookRecordOf,
  type WebhookRow,
  webhookPruneSql,
} from '../webhook-rows.js';
import type { PostgresClient, PostgresPool } from './connection.js';

const INSERT_SQL = webhookInsertSql((i) => `$${i}`);
/** The event of a flip, inserted only when the flip's UPDATE (the `moved` CTE, parameters $1–$3) moved its marker. */
const FLIP_INSERT_SQL = webhookInsertSql((i) => `$${i + 3}`, 'moved');

/** Writes an event inside the caller's transaction; false when its dedupe key was written before. */
export async function insertWebhookEvent(client: PostgresClient | PostgresPool, event: NewWebhookEvent, now: number): Promise<boolean> {
  return (await client.query(INSERT_SQL, webhookInsertValues(event, now))).rowCount === 1;
}

export class PostgresWebhookStore implements WebhookStore {
  constructor(private readonly pool: PostgresPool) {}

  async enqueue(event: NewWebhookEvent, now: number): Promise<boolean> {
    return insertWebhookEvent(this.pool, event, now);
  }

  /**
   * Each flip is one statement on its own (the marker's UPDATE and its event's INSERT in one CTE, committed
   * as it runs), never a transaction held open across round trips: a flip locks an account or key row, and
   * the ledger's group commit waits for that lock at most lock_timeout (1 s). A scan whose transaction held
   * the row while a saturated event loop delayed its next statements made a batch of holds fail with 503
   * (500 concurrent streams on one account, once in a CI run). The conditional UPDATE keeps each crossing
   * announced once, whatever runs beside it.
   */
  async scan(scan: NotificationScan): Promise<number> {
    const accounts = (await this.pool.query<ScanAccountRow>(SCAN_ACCOUNT_SQL)).rows;
    const keys = (await this.pool.query<ScanKeyRow>(SCAN_KEY_SQL)).rows;
    // Accounts' rows first, then keys': the lock order of every ledger writer.
    let written = 0;
    for (const flip of [...accountFlips(accounts, scan), ...keyFlips(keys, scan)]) {
      const update = `UPDATE ${flip.table} SET ${flip.column} = $1 WHERE id = $2 AND ${flip.column} IS NOT DISTINCT FROM $3`;
      if (!flip.event) {
        await this.pool.query(update, [flip.to, flip.id, flip.from]);
        continue;
      }
      const inserted = await this.pool.query(`WITH moved AS (${update} RETURNING 1) ${FLIP_INSERT_SQL}`, [flip.to, flip.id, flip.from, ...webhookInsertValues(flip.event, scan.now)]);
      if (inserted.rowCount === 1) written++;
    }
    return written;
  }

  async claim(claim: WebhookClaim): Promise<WebhookEventRecord[]> {
    const { rows } = await this.pool.query<WebhookRow>(
      `UPDATE webhook_outbox SET lease_owner = $1, lease_until = $2
       WHERE id IN (
         SELECT id FROM webhook_outbox
         WHERE status = 'pending' AND next_attempt_at <= $3 AND (lease_until IS NULL OR lease_until < $3)
         ORDER BY next_attempt_at, id LIMIT $4 FOR UPDATE SKIP LOCKED)
       RETURNING ${WEBHOOK_COLUMNS}`,
      [claim.owner, claim.now + claim.leaseMs, claim.now, claim.limit],
    );
    return rows.map(webhookRecordOf).sort((a, b) => a.id - b.id);
  }

  async complete(id: number, owner: string, result: WebhookAttemptResult, now: number): Promise<boolean> {
    const { sql, values } = webhookCompleteSql(id, owner, result, now, (i) => `$${i}`);
    return (await this.pool.query(sql, values)).rowCount === 1;
  }

  async get(id: number): Promise<WebhookEventRecord | undefined> {
    const { rows } = await this.pool.query<WebhookRow>(`SELECT ${WEBHOOK_COLUMNS} FROM webhook_outbox WHERE id = $1`, [id]);
    return rows[0] && webhookRecordOf(rows[0]);
  }

  async page(query: WebhookPageQuery): Promise<WebhookEventRecord[]> {
    const { sql, values } = webhookPageSql(query, (i) => `$${i}`);
    const { rows } = await this.pool.query<WebhookRow>(sql, values);
    return rows.map(webhookRecordOf);
  }

  async resend(id: number, now: number): Promise<WebhookEventRecord | undefined> {
    await this.pool.query(`UPDATE webhook_outbox SET ${WEBHOOK_RESEND_SET}, next_attempt_at = $1, retry_from = $1 WHERE id = $2`, [now, id]);
    return this.get(id);
  }

  async pendingCount(): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>("SELECT COUNT(*) AS n FROM webhook_outbox WHERE status = 'pending'");
    return Number(rows[0]?.n ?? 0);
  }

  async prune(before: number, limit: number): Promise<number> {
    return (await this.pool.query(webhookPruneSql((i) => `$${i}`), [before, limit])).rowCount ?? 0;
  }
}
