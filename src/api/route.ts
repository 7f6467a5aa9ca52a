// The one POST handler every client API shares: validate → claim the Idempotency-Key → run the flow →
// answer JSON or stream — registered per API as an encapsulated Fastify plugin whose error handler
// answers in that API's envelope (a 401 from the key check included).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { clientRequestOf } from '../http/client-request.js';
import type { ClientApiRoutes, ServerDeps } from '../http/deps.js';
import { IDEMPOTENCY_HEADER, IdempotencyTicket, RecordingText } from '../http/idempotency.js';
import { gatewayJsonParser } from '../http/json-body.js';
import { errorRenderer } from '../http/render-error.js';
import { SseResponse } from '../http/sse-response.js';
import type { JsonObject } from '../json-object.js';
import { byMembers } from './body-by-members.js';
import { withRawText } from './raw-body.js';
import type { ClientApi } from '../pipeline/client-api.js';
import { ClientGoneError } from '../pipeline/deps.js';
import { runRequest } from '../pipeline/run.js';

const SSE_TYPE = 'text/event-stream; charset=utf-8';

/**
 * `more`: the API's other routes (count_tokens, input_tokens, ...), registered in the same plugin, so
 * they answer in its envelope too.
 */
export function clientApiRoutes<Body extends JsonObject>(api: ClientApi<Body>, more?: (scope: FastifyInstance, deps: ServerDeps) => void): ClientApiRoutes {
  return {
    path: api.path,
    metricsLabel: api.metricsLabel,
    endpoint: api.endpoint,
    register(v1: FastifyInstance, deps: ServerDeps): void {
      v1.register(async function clientApiPlugin(scope) {
        scope.setErrorHandler(errorRenderer(deps, (error, requestId) => api.envelope(error, requestId), api.errorFor?.bind(api)));
        if (api.forwardsRawBody) {
          // A coding agent's large body, parsed only where it is new (body-by-members.ts).
          scope.removeContentTypeParser('application/json');
          scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, byMembers(gatewayJsonParser(scope)));
        }
        scope.post(api.path, (request, reply) => handle(api, deps, request, reply));
        more?.(scope, deps);
      });
    },
  };
}

async function handle<Body extends JsonObject>(api: ClientApi<Body>, deps: ServerDeps, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const validated = api.validate(request.body);
  // Only an API with native cells forwards the bytes as received; the others never pay for keeping them.
  const body = api.forwardsRawBody ? withRawText(validated, request.rawBody, request.rawBytes) : validated;
  // Whatever is kept now rides with the body; the request holds no second reference for its whole life.
  request.rawBody = undefined;
  request.rawBytes = undefined;
  // Without the header nothing is read or written: no cost on the hot path. A dry run moves nothing to protect.
  const { headers } = request;
  const ticket = headers['idempotency-key'] === undefined || headers['x-tollgate-dry-run'] === '1' ? undefined : await IdempotencyTicket.claim(deps, request, reply);
  if (ticket === true) return reply;
  const client = clientRequestOf(request, reply, api.endpoint);
  let sink: SseResponse | undefined;
  const openSink = () => {
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
    sink = new SseResponse(reply, { requestId: request.id, clientGone: client.signal, writeStallMs: deps.config.server.writeStallMs, log: deps.log, ...(record ? { record } : {}) });
    return sink;
  };
  const flow = deps.inFlight.track(runRequest(api, deps, client, body, openSink));
  request.flow = flow;
  const result = await flow;
  if (!result.ok) {
    // Refused or failed before any output: nothing to replay, and nothing was charged for a retry to repeat.
    await ticket?.forget();
    if (result.error instanceof ClientGoneError) {
      if (!reply.sent) reply.hijack();
      return reply;
    }
    throw result.error;
  }
  if (result.answer.kind === 'json') {
    const text = JSON.stringify(result.answer.body);
    if (ticket && !(await ticket.complete({ status: 200, contentType: 'application/json', body: text }))) reply.header(IDEMPOTENCY_HEADER, 'not-stored');
    return reply.type('application/json').send(text);
  }
  await sink?.closing;
  return reply;
}
