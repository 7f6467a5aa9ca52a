// The outbox's rows and statements shared by both dialects (docs/adr/0052-signed-webhooks.md).
import { randomBytes } from 'node:crypto';
import type { NewWebhookEvent, WebhookAttemptResult, WebhookEventRecord, WebhookEventType, WebhookPageQuery, WebhookStatus } from './types.js';

export const WEBHOOK_COLUMNS =
  'id, message_id, type, data, created_at, status, attempts, next_attempt_at, retry_from, delivered_to, last_error, last_attempt_at, delivered_at';

export interface WebhookRow {
  readonly id: number | string;
  readonly message_id: string;
  readonly type: string;
  readonly data: string;
  readonly created_at: number;
  readonly status: string;
  readonly attempts: number;
  readonly next_attempt_at: number;
  readonly retry_from: number;
  readonly delivered_to: string;
  readonly last_error: string | null;
  readonly last_attempt_at: number | null;
  readonly delivered_at: number | null;
}

export function webhookRecordOf(row: WebhookRow): WebhookEventRecord {
  return {
    id: Number(row.id),
    messageId: row.message_id,
    type: row.type as WebhookEventType,
    data: JSON.parse(row.data) as Record<string, unknown>,
    createdAt: Number(row.created_at),
    status: row.status as WebhookStatus,
    attempts: Number(row.attempts),
    nextAttemptAt: Number(row.next_attempt_at),
    retryFrom: Number(row.retry_from),
    deliveredTo: JSON.parse(row.delivered_to) as string[],
    lastError: row.last_error,
    lastAttemptAt: row.last_attempt_at === null ? null : Number(row.last_attempt_at),
    deliveredAt: row.delivered_at === null ? null : Number(row.delivered_at),
  };
}

/** The insert of one event, due at once: its values in the order of WEBHOOK_INSERT's placeholders. */
export function webhookInsertValues(event: NewWebhookEvent, now: number): unknown[] {
  // The webhook-id: unique across gateways and databases (a receiver deduplicates by it).
  const messageId = `msg_${randomBytes(16).toString('hex')}`;
  return [messageId, event.type, JSON.stringify(event.data), event.dedupeKey ?? null, now, now, now];
}

/** The insert of one event (webhookInsertValues' seven values); with `from`, only for each row that query yields. */
export function webhookInsertSql(p: (i: number) => string, from?: string): string {
  const values = [1, 2, 3, 4, 5, 6, 7].map(p).join(', ');
  return `INSERT INTO webhook_outbox (message_id, type, data, dedupe_key, created_at, next_attempt_at, retry_from)
    ${from === undefined ? `VALUES (${values})` : `SELECT ${values} FROM ${from}`} ON CONFLICT DO NOTHING`;
}

export function webhookPageSql(query: WebhookPageQuery, p: (i: number) => string): { sql: string; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (clause: (at: string) => string, value: unknown) => {
    values.push(value);
    where.push(clause(p(values.length)));
  };
  if (query.type !== undefined) add((at) => `type = ${at}`, query.type);
  if (query.status !== undefined) add((at) => `status = ${at}`, query.status);
  if (query.beforeId !== undefined) add((at) => `id < ${at}`, query.beforeId);
  values.push(query.limit);
  return {
    sql: `SELECT ${WEBHOOK_COLUMNS} FROM webhook_outbox ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ${p(values.length)}`,
    values,
  };
}

/**
 * The UPDATE that records a round's result, only while `owner` holds the lease of a pending row (a
 * deliverer whose lease lapsed and was taken changes nothing).
 */
export function webhookCompleteSql(id: number, owner: string, result: WebhookAttemptResult, now: number, p: (i: number) => string): { sql: string; values: unknown[] } {
  const set: string[] = ['lease_owner = NULL', 'lease_until = NULL'];
  const values: unknown[] = [];
  const assign = (column: string, value: unknown) => {
    values.push(value);
    set.push(`${column} = ${p(values.length)}`);
  };
  if (result.outcome !== 'released') {
    set.push('attempts = attempts + 1');
    assign('last_attempt_at', now);
    assign('delivered_to', JSON.stringify(result.deliveredTo));
    if (result.outcome === 'delivered' || result.outcome === 'skipped') {
      assign('status', result.outcome);
      assign('delivered_at', result.outcome === 'delivered' ? now : null);
      assign('last_error', null);
    } else if (result.outcome === 'retry') {
      assign('next_attempt_at', result.nextAttemptAt);
      assign('last_error', result.error.slice(0, 1000));
    } else if (result.outcome === 'failed') {
      assign('status', 'failed');
      assign('last_error', result.error.slice(0, 1000));
    }
  }
  // A skipped event was not attempted: its counter stays.
  if (result.outcome === 'skipped') set.splice(set.indexOf('attempts = attempts + 1'), 1);
  values.push(id, owner);
  const idAt = p(values.length - 1);
  const ownerAt = p(values.length);
  return { sql: `UPDATE webhook_outbox SET ${set.join(', ')} WHERE id = ${idAt} AND lease_owner = ${ownerAt} AND status = 'pending'`, values };
}

export const WEBHOOK_RESEND_SET =
  "status = 'pending', delivered_to = '[]', delivered_at = NULL, " +
  // A row being delivered keeps its lease (its deliverer finishes; no second one starts meanwhile).
  "lease_owner = CASE WHEN status = 'pending' THEN lease_owner END, lease_until = CASE WHEN status = 'pending' THEN lease_until END";

/**
 * Outbox retention: up to `limit` events settled (delivered, skipped or failed) before a moment, oldest
 * first; a pending event is kept however old (it is still owed). Params: the moment, the limit.
 */
export function webhookPruneSql(p: (i: number) => string): string {
  return `DELETE FROM webhook_outbox WHERE id IN (
    SELECT id FROM webhook_outbox WHERE status <> 'pending' AND created_at < ${p(1)} ORDER BY id LIMIT ${p(2)})`;
}
