// POST /v1/chat/completions: the OpenAI chat completions API on the one request flow.
import type { GatewayError } from '../../errors.js';
import type { ClientApi } from '../../pipeline/client-api.js';
import type { ChatRequestBody } from '../../providers/types.js';
import { openaiUsage } from '../openai-usage.js';
import { chatOutputBudget, withMaxOutput } from './budget.js';
import { countChatInput } from './count-input.js';
import { OutputMeter } from './output-meter.js';
import { ChatClientStream } from './stream.js';
import { validateChatRequest } from './validate.js';

export const openaiChat: ClientApi<ChatRequestBody> = {
  endpoint: 'chat',
  path: '/chat/completions',
  metricsLabel: 'chat_completions',
  modelType: 'chat',
  validate: validateChatRequest,
  modelOf: (body) => body.model,
  streams: (body) => body.stream === true,
  countInput: countChatInput,
  outputBudget: chatOutputBudget,
  withMaxOutput,
  buildRequest: (body, candidate) => candidate.adapter.buildChatRequest(body, candidate.target),
  parseAnswer(json, _body, candidate) {
    const parsed = candidate.adapter.parseChatResponse(json, candidate.target);
    return {
      body: parsed.body,
      usage: parsed.usage,
      // Counted only when needed (no usage, or a fault): most answers carry exact usage.
      delivered() {
        const meter = new OutputMeter();
        meter.observeCompletion(parsed.body);
        return meter.tokens();
      },
    };
  },
  answerWith(answer, charge) {
    answer.body.usage = openaiUsage(charge, answer.usage, true);
    return answer.body;
  },
  openStream: (body, candidate, requestId) => new ChatClientStream(candidate.adapter.createChatStreamTranslator(candidate.target, body), candidate.target.clientModel, requestId),
  envelope: (error: GatewayError) => error.toBody(),
};
