// POST /v1/chat/completions
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../../errors.js';
import { runChat } from '../../pipeline/chat.js';
import { ClientGoneError } from '../../pipeline/deps.js';
import { encodeSseData, SSE_DONE } from '../../streaming/sse-encoder.js';
import { clientRequestOf } from '../client-request.js';
import { IDEMPOTENCY_HEADER, IdempotencyTicket, RecordingText } from '../idempotency.js';
import type { ServerDeps } from '../server.js';
import { SseResponse } from '../sse-response.js';
import { validateChatRequest } from '../validate-request.js';

const SSE_TYPE = 'text/event-stream; charset=utf-8';

export function registerChatRoute(app: FastifyInstance, deps: ServerDeps): void {
  app.post('/chat/completions', async function chatCompletions(request, reply) {
    const body = validateChatRequest(request.body);
    // Without the header nothing is read or written: no cost on the hot path. A dry run moves nothing to protect.
    const { headers } = request;
    const ticket = headers['idempotency-key'] === undefined || headers['x-tollgate-dry-run'] === '1' ? undefined : await IdempotencyTicket.claim(deps, request, reply);
    if (ticket === true) return reply;
    const client = clientRequestOf(request, reply);
    let sink: SseResponse | undefined;
    try {
      const openSink = () => {
        // Called when the first chunk is ready to go: the time to first token.
        client.trace.firstTokenAt = performance.now();
        if (ticket) reply.header('trailer', IDEMPOTENCY_HEADER);
        const record = ticket && {
          text: new RecordingText(ticket.maxBytes),
          // A client that left did not get the answer: its retry may run the request again (ADR 0019).
          save: async (text: string | undefined) => {
            if (client.signal.aborted) return void (await ticket.forget());
            if (text !== undefined && (await ticket.complete({ status: 200, contentType: SSE_TYPE, body: text }))) return undefined;
            await ticket.completeUnkept();
            return { [IDEMPOTENCY_HEADER]: 'not-stored' };
          },
        };
        sink = new SseResponse(reply, {
          requestId: request.id,
          clientGone: client.signal,
          writeStallMs: deps.config.server.writeStallMs,
          log: deps.log,
          ...(record ? { record } : {}),
        });
        return sink;
      };
      const outcome = await deps.inFlight.track(runChat(deps, client, body, openSink));
      if (outcome.kind === 'json') {
        if (deps.config.log.bodies) client.trace.answer = outcome.body;
        const text = JSON.stringify(outcome.body);
        if (ticket && !(await ticket.complete({ status: 200, contentType: 'application/json', body: text }))) reply.header(IDEMPOTENCY_HEADER, 'not-stored');
        return reply.type('application/json').send(text);
      }
      await sink?.closing;
      return reply;
    } catch (error) {
      if (error instanceof ClientGoneError) {
        await ticket?.forget();
        if (!reply.sent) reply.hijack();
        return reply;
      }
      // Once the SSE response has started, an error can only be reported inside the stream.
      if (sink?.started) {
        deps.log.error({ err: error, requestId: request.id }, 'stream failed after it started');
        sink.end(encodeSseData(new GatewayError('internal_error').toBody()) + SSE_DONE);
        await sink.closing;
        return reply;
      }
      // Refused or failed before any output: nothing to replay, and nothing was charged for a retry to repeat.
      await ticket?.forget();
      throw error;
    }
  });
}
