// The webhook outbox through /admin/v1/webhooks/events (docs/adr/0052-signed-webhooks.md): the list, and a
// resend with an Idempotency-Key made once per click, so a double click sends the event once more, not twice.
import { getJson, withQuery } from './api.js';
import type { ListPage, WebhookEventJson } from './types.js';

const EVENTS = '/admin/v1/webhooks/events';

export interface WebhookListQuery {
  type?: string;
  status?: string;
  after?: string;
}

export function listWebhookEvents(token: string, query: WebhookListQuery): Promise<ListPage<WebhookEventJson>> {
  return getJson(withQuery(EVENTS, { limit: 50, type: query.type || undefined, status: query.status || undefined, after: query.after }), { token });
}

export function resendWebhookEvent(token: string, id: number, idempotencyKey: string): Promise<WebhookEventJson> {
  return getJson(`${EVENTS}/${id}/resend`, { token, body: {}, idempotencyKey });
}
