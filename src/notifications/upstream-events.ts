// upstream.cooling and upstream.recovered (docs/adr/0052-signed-webhooks.md): written to the outbox when
// this gateway's health table sees an upstream start cooling down after its own failures, and answer
// again after one. No database change causes them, so each is its own small transaction, off the request
// (the request only calls a listener on those transitions). Cool-downs learnt from another gateway
// (shared through Redis) write nothing: the gateway that saw the failures wrote the event. Several
// gateways tripping on one outage within the same cool-down window write one event: the dedupe key is
// the upstream and the window.
import type { Logger } from '../log.js';
import type { HealthTransitions } from '../routing/upstream-health.js';
import type { NewWebhookEvent, WebhookStore } from '../storage/types.js';

export function upstreamEvents(store: WebhookStore, log: Logger, now: () => number = Date.now): HealthTransitions {
  const write = (event: NewWebhookEvent) => {
    store.enqueue(event, now()).catch((error: unknown) => log.warn({ err: error, type: event.type }, 'webhook event not written: the database did not take it'));
  };
  return {
    cooling(provider, upstreamModel, coolingUntil, lastError) {
      const at = now();
      const windowMs = Math.max(coolingUntil - at, 1_000);
      write({
        type: 'upstream.cooling',
        data: { provider, upstream_model: upstreamModel, cooling_until: new Date(coolingUntil).toISOString(), last_error: { status: lastError.status, message: lastError.message } },
        dedupeKey: `upstream.cooling:${provider}:${upstreamModel}:${Math.floor(at / windowMs)}`,
      });
    },
    recovered(provider, upstreamModel) {
      write({ type: 'upstream.recovered', data: { provider, upstream_model: upstreamModel } });
    },
  };
}
