// The operator's verbs on the webhook outbox (docs/adr/0052-signed-webhooks.md), once for the CLI
// (`tollgate webhooks list|resend`), the admin API (/admin/v1/webhooks/events) and the dashboard.
import { GatewayError } from '../errors.js';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_STATUSES, type Store, type WebhookEventRecord, type WebhookEventType, type WebhookStatus } from '../storage/types.js';
import type { WebhookEventJson } from './json-types.js';
import { decodeCursor, listPage, pageSize, type ListPage } from './page.js';

export interface WebhookListInput {
  readonly limit?: unknown;
  readonly after?: unknown;
  readonly type?: unknown;
  readonly status?: unknown;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function webhookEventObject(event: WebhookEventRecord): WebhookEventJson {
  return {
    object: 'webhook_event',
    id: event.id,
    message_id: event.messageId,
    type: event.type,
    data: { ...event.data },
    created_at: new Date(event.createdAt).toISOString(),
    status: event.status,
    attempts: event.attempts,
    next_attempt_at: event.status === 'pending' ? iso(event.nextAttemptAt) : null,
    last_attempt_at: iso(event.lastAttemptAt),
    last_error: event.lastError,
    delivered_at: iso(event.deliveredAt),
    delivered_to: [...event.deliveredTo],
  };
}

function typeOf(value: unknown): WebhookEventType | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(value)) {
    throw new GatewayError('invalid_request', { param: 'type', message: `Invalid 'type': expected one of ${WEBHOOK_EVENT_TYPES.join(', ')}.` });
  }
  return value as WebhookEventType;
}

function statusOf(value: unknown): WebhookStatus | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !(WEBHOOK_STATUSES as readonly string[]).includes(value)) {
    throw new GatewayError('invalid_request', { param: 'status', message: `Invalid 'status': expected one of ${WEBHOOK_STATUSES.join(', ')}.` });
  }
  return value as WebhookStatus;
}

const isPosition = (p: unknown): p is number => typeof p === 'number' && Number.isSafeInteger(p) && p > 0;

/** Events newest first, filtered by type and status, one page after the cursor. */
export async function listWebhookEvents(store: Store, input: WebhookListInput = {}): Promise<ListPage<WebhookEventJson>> {
  const limit = pageSize(input.limit);
  const type = typeOf(input.type);
  const status = statusOf(input.status);
  const before = input.after === undefined ? undefined : decodeCursor('webhook_events', input.after, isPosition);
  const rows = await store.webhooks.page({ ...(type ? { type } : {}), ...(status ? { status } : {}), ...(before ? { beforeId: before } : {}), limit: limit + 1 });
  return listPage('webhook_events', rows, limit, webhookEventObject, (e) => e.id);
}

function idOf(value: unknown): number {
  const n = typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
    throw new GatewayError('webhook_event_not_found', { message: `No webhook event with id ${String(value)}.` });
  }
  return n;
}

export async function requireWebhookEvent(store: Store, id: unknown): Promise<WebhookEventRecord> {
  const event = await store.webhooks.get(idOf(id));
  if (!event) throw new GatewayError('webhook_event_not_found', { message: `No webhook event with id ${String(id)}.` });
  return event;
}

/** Makes an event due again at once, to every configured endpoint that wants it (the same webhook-id). */
export async function resendWebhookEvent(store: Store, id: unknown, now = Date.now()): Promise<WebhookEventRecord> {
  const event = await requireWebhookEvent(store, id);
  return (await store.webhooks.resend(event.id, now))!;
}
