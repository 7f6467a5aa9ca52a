// POST /v1/chat/completions
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../../errors.js';
import { runChat } from '../../pipeline/chat.js';
import { ClientGoneError, type PipelineDeps } from '../../pipeline/deps.js';
import type { InFlightRequests } from '../../pipeline/in-flight.js';
import { encodeSseData, SSE_DONE } from '../../streaming/sse-encoder.js';
import { clientRequestOf } from '../client-request.js';
import { SseResponse } from '../sse-response.js';
import { validateChatRequest } from '../validate-request.js';

export function registerChatRoute(app: FastifyInstance, deps: PipelineDeps, inFlight: InFlightRequests): void {
  app.post('/chat/completions', async function chatCompletions(request, reply) {
    const body = validateChatRequest(request.body);
    const client = clientRequestOf(request, reply);
    let sink: SseResponse | undefined;
    try {
      const openSink = () => {
        // Called when the first chunk is ready to go: the time to first token.
        client.trace.firstTokenAt = performance.now();
        return (sink = new SseResponse(reply, { requestId: request.id, clientGone: client.signal, writeStallMs: deps.config.server.writeStallMs, log: deps.log }));
      };
      const outcome = await inFlight.track(runChat(deps, client, body, openSink));
      if (outcome.kind === 'json') {
        if (deps.config.log.bodies) client.trace.answer = outcome.body;
        return reply.type('application/json').send(JSON.stringify(outcome.body));
      }
      return reply;
    } catch (error) {
      if (error instanceof ClientGoneError) {
        if (!reply.sent) reply.hijack();
        return reply;
      }
      // Once the SSE response has started, an error can only be reported inside the stream.
      if (sink?.started) {
        deps.log.error({ err: error, requestId: request.id }, 'stream failed after it started');
        sink.end(encodeSseData(new GatewayError('internal_error').toBody()) + SSE_DONE);
        return reply;
      }
      throw error;
    }
  });
}
