// /admin/v1/webhooks/events...: thin handlers over operations/webhooks.ts — the outbox listed (newest first,
// cursor paging, ?type= and ?status= filters) and one event made due again (Idempotency-Key).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { listWebhookEvents, requireWebhookEvent, resendWebhookEvent, webhookEventObject } from '../../../operations/webhooks.js';
import { listQuery, readInput } from './admin-input.js';
import type { AdminDeps } from './admin-deps.js';
import { idempotentPost } from './idempotent-post.js';

const eventsQuery = z.strictObject({ ...listQuery, type: z.string().optional(), status: z.string().optional() });
const noQuery = z.strictObject({});
const emptyBody = z.strictObject({});

const idOf = (request: FastifyRequest): string => (request.params as { id: string }).id;

export function registerWebhookRoutes(app: FastifyInstance, deps: AdminDeps): void {
  const { store } = deps;

  app.get('/webhooks/events', async function listAdminWebhookEvents(request) {
    return listWebhookEvents(store, readInput(eventsQuery, request.query));
  });

  app.get('/webhooks/events/:id', async function getAdminWebhookEvent(request) {
    readInput(noQuery, request.query);
    return webhookEventObject(await requireWebhookEvent(store, idOf(request)));
  });

  app.post(
    '/webhooks/events/:id/resend',
    idempotentPost(store.idempotency, async function resendAdminWebhookEvent(request) {
      readInput(emptyBody, request.body);
      return { status: 200, body: webhookEventObject(await resendWebhookEvent(store, idOf(request))) };
    }),
  );
}
