// POST /v1/messages: the Anthropic Messages API (Claude Code's) on the one request flow, product.md §14.
// Native cells only for now — an upstream that speaks Messages gets the client's bytes with only `model`
// replaced; a model with no such upstream answers 400 model_not_supported_on_endpoint (translation to
// chat upstreams is the next step). POST /v1/messages/count_tokens shares its plugin and envelope.
import type { ClientApi } from '../../pipeline/client-api.js';
import { messagesAnswer, messagesAnswerWith } from './answer.js';
import { messagesOutputBudget, withMaxTokens } from './budget.js';
import { countMessagesInput } from './count-input.js';
import { messagesEnvelope } from './envelope.js';
import { messagesCellFor, messagesPath, nativeRequest } from './request.js';
import { refuseServerTools } from './server-tools.js';
import { MessagesClientStream } from './stream.js';
import { asksOneHourCache } from './usage.js';
import { validateMessagesRequest, type MessagesRequestBody } from './validate.js';

export const anthropicMessages: ClientApi<MessagesRequestBody> = {
  endpoint: 'messages',
  path: '/messages',
  metricsLabel: 'messages',
  modelType: 'chat',
  forwardsRawBody: true,
  cellFor: messagesCellFor,
  validate: validateMessagesRequest,
  modelOf: (body) => body.model,
  streams: (body) => body.stream === true,
  countInput(body, model) {
    if (!model.allowServerTools) refuseServerTools(body);
    return countMessagesInput(body, model.toolOverheadTokens);
  },
  outputBudget: messagesOutputBudget,
  withMaxOutput: withMaxTokens,
  buildRequest: (body, candidate, headers) => nativeRequest(body, candidate, headers, body.stream === true, messagesPath(candidate)),
  parseAnswer: (json, body) => messagesAnswer(json, () => asksOneHourCache(body)),
  answerWith: messagesAnswerWith,
  openStream: (body, _candidate, requestId) => new MessagesClientStream(requestId, () => asksOneHourCache(body)),
  envelope: messagesEnvelope,
};
