// POST /v1/embeddings
import type { FastifyInstance } from 'fastify';
import { ClientGoneError, type PipelineDeps } from '../../pipeline/deps.js';
import type { InFlightRequests } from '../../pipeline/in-flight.js';
import { runEmbeddings } from '../../pipeline/embeddings.js';
import { clientRequestOf } from '../client-request.js';
import { validateEmbeddingRequest } from '../validate-request.js';

export function registerEmbeddingsRoute(app: FastifyInstance, deps: PipelineDeps, inFlight: InFlightRequests): void {
  app.post('/embeddings', async function embeddings(request, reply) {
    const body = validateEmbeddingRequest(request.body);
    try {
      const result = await inFlight.track(runEmbeddings(deps, clientRequestOf(request, reply), body));
      return reply.type('application/json').send(JSON.stringify(result));
    } catch (error) {
      if (error instanceof ClientGoneError) {
        reply.hijack();
        return reply;
      }
      throw error;
    }
  });
}
