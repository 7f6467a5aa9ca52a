// The webhook outbox on SQLite (docs/adr/0052-signed-webhooks.md). A lease is a conditional UPDATE in an
// IMMEDIATE transaction (the database's one writer at a time): a row is leased by one deliverer until its
// lease lapses, whichever process (or `serve --workers` worker) asks.
import type { NewWebhookEvent, NotificationScan, WebhookAttemptResult, WebhookClaim, WebhookEventRecord, WebhookPageQuery, WebhookStore } from '../types.js';
import { accountFlips, keyFlips, SCAN_ACCOUNT_SQL, SCAN_KEY_SQL, type ScanAccountRow, type ScanFlip, type ScanKeyRow } from '../webhook-scan.js';
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
import type { SqliteDatabase } from './connection.js';

/** Writes an event inside the caller's transaction; false when its dedupe key was written before. */
export function prepareWebhookInsert(db: SqliteDatabase): (event: NewWebhookEvent, now: number) => boolean {
  const insert = db.prepare(webhookInsertSql(() => '?'));
  return (event, now) => insert.run(...webhookInsertValues(event, now)).changes === 1;
}

export class SqliteWebhookStore implements WebhookStore {
  private readonly insert;
  private readonly byId;
  private readonly claimTx;
  private readonly scanTx;
  private readonly anyDue;

  constructor(private readonly db: SqliteDatabase) {
    this.insert = prepareWebhookInsert(db);
    this.byId = db.prepare<[number], WebhookRow>(`SELECT ${WEBHOOK_COLUMNS} FROM webhook_outbox WHERE id = ?`);
    const due = db.prepare<[number, number, number], { id: number }>(
      `SELECT id FROM webhook_outbox WHERE status = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until < ?) ORDER BY next_attempt_at, id LIMIT ?`,
    );
    const lease = db.prepare<[string, number, number, number], WebhookRow>(
      `UPDATE webhook_outbox SET lease_owner = ?, lease_until = ? WHERE id = ? AND status = 'pending' AND (lease_until IS NULL OR lease_until < ?) RETURNING ${WEBHOOK_COLUMNS}`,
    );
    this.anyDue = db.prepare<[number, number], { id: number }>(
      `SELECT id FROM webhook_outbox WHERE status = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until < ?) LIMIT 1`,
    );
    this.claimTx = db.transaction((claim: WebhookClaim): WebhookEventRecord[] => {
      const rows: WebhookEventRecord[] = [];
      for (const { id } of due.all(claim.now, claim.now, claim.limit)) {
        const row = lease.get(claim.owner, claim.now + claim.leaseMs, id, claim.now);
        if (row) rows.push(webhookRecordOf(row));
      }
      return rows;
    });
    const accounts = db.prepare<[], ScanAccountRow>(SCAN_ACCOUNT_SQL);
    const keys = db.prepare<[], ScanKeyRow>(SCAN_KEY_SQL);
    this.scanTx = db.transaction((scan: NotificationScan): number => {
      const flips = [...accountFlips(accounts.all(), scan), ...keyFlips(keys.all(), scan)];
      return flips.filter((flip) => this.apply(flip, scan.now)).length;
    });
  }

  /** Moves one marker if it is still as read; writes its event with it. True when an event was written. */
  private apply(flip: ScanFlip, now: number): boolean {
    const moved = this.db.prepare(`UPDATE ${flip.table} SET ${flip.column} = ? WHERE id = ? AND ${flip.column} IS ?`).run(flip.to, flip.id, flip.from).changes === 1;
    return moved && flip.event !== undefined && this.insert(flip.event, now);
  }

  async enqueue(event: NewWebhookEvent, now: number): Promise<boolean> {
    return this.db.transaction(() => this.insert(event, now)).immediate();
  }

  async scan(scan: NotificationScan): Promise<number> {
    return this.scanTx.immediate(scan);
  }

  async claim(claim: WebhookClaim): Promise<WebhookEventRecord[]> {
    // An idle outbox costs a read, not the write lock the requests' ledger writes wait for.
    if (this.anyDue.get(claim.now, claim.now) === undefined) return [];
    return this.claimTx.immediate(claim);
  }

  async complete(id: number, owner: string, result: WebhookAttemptResult, now: number): Promise<boolean> {
    const { sql, values } = webhookCompleteSql(id, owner, result, now, () => '?');
    return this.db.prepare(sql).run(...values).changes === 1;
  }

  async get(id: number): Promise<WebhookEventRecord | undefined> {
    const row = this.byId.get(id);
    return row && webhookRecordOf(row);
  }

  async page(query: WebhookPageQuery): Promise<WebhookEventRecord[]> {
    const { sql, values } = webhookPageSql(query, () => '?');
    return this.db.prepare<unknown[], WebhookRow>(sql).all(...values).map(webhookRecordOf);
  }

  async resend(id: number, now: number): Promise<WebhookEventRecord | undefined> {
    this.db.prepare(`UPDATE webhook_outbox SET ${WEBHOOK_RESEND_SET}, next_attempt_at = ?, retry_from = ? WHERE id = ?`).run(now, now, id);
    return this.get(id);
  }

  async pendingCount(): Promise<number> {
    return (this.db.prepare("SELECT COUNT(*) AS n FROM webhook_outbox WHERE status = 'pending'").get() as { n: number }).n;
  }

  async prune(before: number, limit: number): Promise<number> {
    return this.db.prepare(webhookPruneSql(() => '?')).run(before, limit).changes;
  }
}
