// POST /v1/embeddings
import type { FastifyInstance } from 'fastify';
import { ClientGoneError } from '../../pipeline/deps.js';
import { runEmbeddings } from '../../pipeline/embeddings.js';
import { clientRequestOf } from '../client-request.js';
import { IDEMPOTENCY_HEADER, IdempotencyTicket } from '../idempotency.js';
import type { ServerDeps } from '../server.js';
import { validateEmbeddingRequest } from '../validate-request.js';

export function registerEmbeddingsRoute(app: FastifyInstance, deps: ServerDeps): void {
  app.post('/embeddings', async function embeddings(request, reply) {
    const body = validateEmbeddingRequest(request.body);
    // Without the header nothing is read or written: no cost on the hot path. A dry run moves nothing to protect.
    const { headers } = request;
    const ticket = headers['idempotency-key'] === undefined || headers['x-tollgate-dry-run'] === '1' ? undefined : await IdempotencyTicket.claim(deps, request, reply);
    if (ticket === true) return reply;
    try {
      const result = await deps.inFlight.track(runEmbeddings(deps, clientRequestOf(request, reply), body));
      const text = JSON.stringify(result);
      if (ticket && !(await ticket.complete({ status: 200, contentType: 'application/json', body: text }))) reply.header(IDEMPOTENCY_HEADER, 'not-stored');
      return reply.type('application/json').send(text);
    } catch (error) {
      await ticket?.forget();
      if (error instanceof ClientGoneError) {
        reply.hijack();
        return reply;
      }
      throw error;
    }
  });
}
