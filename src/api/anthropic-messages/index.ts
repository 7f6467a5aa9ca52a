// POST /v1/messages: the Anthropic Messages API (Claude Code's) on the one request flow, product.md §14.
// Native cells — an upstream that speaks Messages gets the client's bytes with only `model` replaced — and
// translated ones: an upstream that speaks only chat completions gets the request translated (to-chat/),
// its answer translated back. A model with neither answers 400 model_not_supported_on_endpoint.
// POST /v1/messages/count_tokens shares its plugin and envelope.
import type { ClientApi } from '../../pipeline/client-api.js';
import { messagesAnswer, messagesAnswerWith } from './answer.js';
import { messagesOutputBudget, withMaxTokens } from './budget.js';
import { countMessagesInput } from './count-input.js';
import { messagesEnvelope } from './envelope.js';
import { messagesCellFor, messagesPath, nativeRequest } from './request.js';
import { refuseServerTools } from './server-tools.js';
import { MessagesClientStream } from './stream.js';
import { asksOneHourCache } from './usage.js';
import { historyThinking } from './thinking.js';
import { translatedAnswer, translatedRequest, translatedStream } from './to-chat/index.js';
import { validateMessagesRequest, type MessagesRequestBody } from './validate.js';

export const anthropicMessages: ClientApi<MessagesRequestBody> = {
  endpoint: 'messages',
  path: '/messages',
  metricsLabel: 'messages',
  modelType: 'chat',
  forwardsRawBody: true,
  cellFor: messagesCellFor,
  // Thinking an Anthropic upstream signed goes back only to a native cell: no fallback to a translated one.
  historyCell: (body) => (historyThinking(body.messages).upstreamSigned ? 'native' : undefined),
  validate: validateMessagesRequest,
  modelOf: (body) => body.model,
  streams: (body) => body.stream === true,
  async countInput(body, model, route) {
    const native = route.candidates.some((candidate) => messagesCellFor(candidate) === 'native');
    // Where every cell is translated, the translator refuses server tools itself: no chat upstream runs them.
    if (native && !model.allowServerTools) refuseServerTools(body);
    const counted = await countMessagesInput(body, model.toolOverheadTokens);
    // Chat completions have no cache_control: where no candidate is native, no cache write is held.
    return native || !counted.cacheWrite ? counted : { tokens: counted.tokens };
  },
  outputBudget: messagesOutputBudget,
  withMaxOutput: withMaxTokens,
  buildRequest(body, candidate, headers) {
    if (messagesCellFor(candidate) === 'translated') return translatedRequest(body, candidate);
    return nativeRequest(body, candidate, headers, body.stream === true, messagesPath(candidate));
  },
  parseAnswer(json, body, candidate) {
    if (messagesCellFor(candidate) === 'translated') return translatedAnswer(json, body, candidate);
    return messagesAnswer(json, () => asksOneHourCache(body));
  },
  answerWith: messagesAnswerWith,
  openStream(body, candidate, requestId, inputTokens) {
    if (messagesCellFor(candidate) === 'translated') return translatedStream(body, candidate, requestId, inputTokens);
    return new MessagesClientStream(requestId, () => asksOneHourCache(body));
  },
  envelope: messagesEnvelope,
};
