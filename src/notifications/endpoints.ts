// Which configured endpoints an event goes to (docs/adr/0052-signed-webhooks.md). The list is the
// config's, read at delivery time: an endpoint removed from the config is never contacted again, and no
// URL from anywhere else (an event's data, the database) is ever one.
import type { WebhookEndpoint } from '../config/types.js';
import type { WebhookEventRecord } from '../storage/types.js';

export function wants(endpoint: WebhookEndpoint, type: string): boolean {
  return endpoint.events === '*' || endpoint.events.includes(type);
}

/** The configured endpoints that want this event and have not answered it with a 2xx yet. */
export function targetsOf(endpoints: readonly WebhookEndpoint[], event: Pick<WebhookEventRecord, 'type' | 'deliveredTo'>): WebhookEndpoint[] {
  return endpoints.filter((endpoint) => wants(endpoint, event.type) && !event.deliveredTo.includes(endpoint.url));
}
