// POST /v1/messages/count_tokens (product.md §14): the prompt's input tokens, asked of an Anthropic
// upstream of the model when it has one (its own count is exact), else the gateway's estimate. Free:
// nothing is held or charged and no usage row is written (docs/adr/0038); it counts toward the key's rpm
// only — one rate-limit admission of 0 tokens, finished at once.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isGatewayError } from '../../errors.js';
import { clientRequestOf } from '../../http/client-request.js';
import type { ServerDeps } from '../../http/deps.js';
import { isJsonObject, type JsonObject } from '../../json-object.js';
import { admitRate } from '../../pipeline/admission/rate.js';
import { readUpstreamFailure } from '../../pipeline/call-upstream.js';
import type { ClientRequest } from '../../pipeline/deps.js';
import { stripFields } from '../../pipeline/strip-fields.js';
import { toGatewayError } from '../../pipeline/upstream-error.js';
import { resolveRoute, type Candidate, type Route } from '../../routing/resolve-route.js';
import { readBody } from '../../upstream/transport.js';
import { withRawText } from '../raw-body.js';
import { countMessagesInput } from './count-input.js';
import { messagesPath, nativeRequest } from './request.js';
import { validateCountTokensRequest, type CountTokensBody } from './validate.js';

const ANSWER_LIMIT = 64 * 1024;

export const COUNT_TOKENS_PATH = '/messages/count_tokens';

/** The upstream's count, or undefined when it could not give one (the estimate answers instead). */
async function upstreamCount(deps: ServerDeps, client: ClientRequest, candidate: Candidate, body: CountTokensBody): Promise<JsonObject | undefined> {
  const forwarded = stripFields(body, candidate.provider.stripFields).body;
  const request = nativeRequest(forwarded, candidate, client.headers, false, `${messagesPath(candidate)}/count_tokens`);
  const signal = AbortSignal.any([client.signal, AbortSignal.timeout(candidate.provider.timeouts.totalMs)]);
  let status: number;
  try {
    const response = await deps.transport.send(candidate.provider, request, signal);
    status = response.status;
    if (status >= 300) {
      const failure = toGatewayError(await readUpstreamFailure(candidate, request, response, signal), candidate.provider);
      // The upstream refused the request itself (a 400 on its wording): the client gets that answer.
      if (failure.code === 'upstream_rejected') throw failure;
      deps.log.debug({ requestId: client.requestId, provider: candidate.provider.id, status }, 'count_tokens: the upstream failed; answering with the estimate');
      return undefined;
    }
    const json: unknown = JSON.parse((await readBody(response, ANSWER_LIMIT, signal)).toString('utf8'));
    if (isJsonObject(json) && typeof json.input_tokens === 'number') return json;
  } catch (error) {
    if (client.signal.aborted || isGatewayError(error)) throw error;
    deps.log.debug({ requestId: client.requestId, provider: candidate.provider.id, err: error }, 'count_tokens: the upstream failed; answering with the estimate');
    return undefined;
  }
  deps.log.debug({ requestId: client.requestId, provider: candidate.provider.id }, 'count_tokens: the upstream answered without input_tokens');
  return undefined;
}

async function countTokens(deps: ServerDeps, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const body = withRawText(validateCountTokensRequest(request.body), request.rawBody, request.rawBytes);
  const client = clientRequestOf(request, reply, 'messages');
  const route: Route = resolveRoute(deps.config, client.key.allowedModels, body.model, 'chat');
  (await admitRate(deps, client, 0)).finish(0);
  const anthropic = route.candidates.find((candidate) => candidate.provider.kind === 'anthropic');
  const answer = (anthropic && (await upstreamCount(deps, client, anthropic, body))) ?? {
    input_tokens: (await countMessagesInput(body, route.model.toolOverheadTokens)).tokens,
  };
  return reply.type('application/json').send(JSON.stringify(answer));
}

export function registerCountTokens(scope: FastifyInstance, deps: ServerDeps): void {
  scope.post(COUNT_TOKENS_PATH, (request, reply) => countTokens(deps, request, reply));
}
