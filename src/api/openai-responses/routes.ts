// The Responses API's other routes (product.md §14): POST /v1/responses/input_tokens — the input a request
// would have, free (never held or charged; one rate admission, finished at once, so it counts toward rpm
// only), counted by a native upstream that has the endpoint (OpenAI) or else by the gateway's estimate —
// and the stored-response paths, which answer 404: Tollgate stores no responses (the upstream does; a
// client continues one with previous_response_id).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../errors.js';
import { clientRequestOf } from '../../http/client-request.js';
import type { ServerDeps } from '../../http/deps.js';
import { isJsonObject } from '../../json-object.js';
import { admitRate } from '../../pipeline/admission/rate.js';
import { routeFor } from '../../pipeline/cells.js';
import type { ClientRequest } from '../../pipeline/deps.js';
import { providerKind } from '../../providers/kinds.js';
import { resolveRoute, type Route } from '../../routing/resolve-route.js';
import { readBody } from '../../upstream/transport.js';
import { withRawText } from '../raw-body.js';
import { bindResponses } from './bind.js';
import { countResponsesInput } from './count-input.js';
import { nativeBodyText, nativePath } from './native-request.js';
import { responsesCellFor } from './to-chat/index.js';
import { validateResponsesRequest, type ResponsesBody } from './validate.js';

/** A count's answer is small; anything larger is not one. */
const COUNT_BODY_LIMIT = 64 * 1024;

export function registerResponsesRoutes(scope: FastifyInstance, deps: ServerDeps): void {
  scope.post('/responses/input_tokens', (request, reply) => inputTokens(deps, request, reply));
  const notStored = async (request: FastifyRequest): Promise<never> => {
    throw new GatewayError('not_found', {
      message: `Tollgate does not store responses, so ${request.method} ${request.url.split('?')[0]} has nothing to answer; continue a response with previous_response_id instead.`,
    });
  };
  for (const path of ['/responses/:id', '/responses/:id/*']) {
    scope.get(path, notStored);
    scope.delete(path, notStored);
  }
}

async function inputTokens(deps: ServerDeps, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const body = withRawText(validateResponsesRequest(request.body), request.rawBody, request.rawBytes);
  const client = clientRequestOf(request, reply, 'responses');
  const resolved = routeFor(resolveRoute(deps.config, client.key.allowedModels, body.model, 'chat'), { cellFor: responsesCellFor });
  const bound = await bindResponses(body, resolved, client, deps);
  // Free, but not unlimited: it takes a request of the key's rpm (and holds no tokens of its tpm).
  (await admitRate(deps, client, 0)).finish(0);
  const counted = (await upstreamCount(deps, client, body, bound.route)) ?? (await countResponsesInput(body)) + bound.contextTokens;
  return reply.type('application/json').send(JSON.stringify({ object: 'response.input_tokens', input_tokens: counted }));
}

/**
 * The count of the first native upstream whose kind has a count endpoint (a translated cell's chat upstream counts nothing); undefined when none has, or it
 * did not answer with a count (the gateway's estimate answers instead: a count is advice, not money).
 */
async function upstreamCount(deps: ServerDeps, client: ClientRequest, body: ResponsesBody, route: Route): Promise<number | undefined> {
  const candidate = route.candidates.find((c) => responsesCellFor(c) === 'native' && providerKind(c.provider.kind).tokenCountPaths.responses !== undefined);
  if (!candidate) return undefined;
  const path = nativePath(candidate, providerKind(candidate.provider.kind).tokenCountPaths.responses)!;
  const signal = AbortSignal.any([client.signal, AbortSignal.timeout(candidate.provider.timeouts.totalMs)]);
  try {
    const response = await deps.transport.send(
      candidate.provider,
      { method: 'POST', path, headers: { 'content-type': 'application/json', accept: 'application/json' }, body: nativeBodyText(body, candidate.target.upstreamModel) },
      signal,
    );
    if (response.status !== 200) {
      response.body.destroy();
      deps.log.debug({ requestId: client.requestId, provider: candidate.provider.id, status: response.status }, 'input_tokens: the upstream did not count; estimated');
      return undefined;
    }
    const json: unknown = JSON.parse((await readBody(response, COUNT_BODY_LIMIT, signal)).toString('utf8'));
    const tokens = isJsonObject(json) ? json.input_tokens : undefined;
    return typeof tokens === 'number' && Number.isSafeInteger(tokens) && tokens >= 0 ? tokens : undefined;
  } catch (error) {
    deps.log.debug({ err: error, requestId: client.requestId, provider: candidate.provider.id }, 'input_tokens: the upstream count failed; estimated');
    return undefined;
  }
}
