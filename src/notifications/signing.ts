// Standard Webhooks signing (https://www.standardwebhooks.com), with the reference library: the body is
// `{type, timestamp, data}`; `webhook-id` is the event's message id (the same on every attempt, so a
// receiver drops a repeat), `webhook-timestamp` the attempt's time in seconds and `webhook-signature`
// `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` under the endpoint's secret.
import { Webhook } from 'standardwebhooks';
import type { WebhookEventRecord } from '../storage/types.js';

export interface SignedDelivery {
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** The payload every endpoint receives for an event. */
export function payloadOf(event: Pick<WebhookEventRecord, 'type' | 'createdAt' | 'data'>): string {
  return JSON.stringify({ type: event.type, timestamp: new Date(event.createdAt).toISOString(), data: event.data });
}

const signers = new Map<string, Webhook>();

export function signDelivery(secret: string, event: Pick<WebhookEventRecord, 'messageId' | 'type' | 'createdAt' | 'data'>, now: number): SignedDelivery {
  let signer = signers.get(secret);
  if (!signer) signers.set(secret, (signer = new Webhook(secret)));
  const body = payloadOf(event);
  const at = new Date(Math.floor(now / 1000) * 1000);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Tollgate-Webhooks',
      'webhook-id': event.messageId,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signer.sign(event.messageId, at, body),
    },
  };
}
