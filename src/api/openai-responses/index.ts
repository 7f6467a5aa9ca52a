// POST /v1/responses: the OpenAI Responses API (Codex CLI, the AI SDK's default OpenAI provider) on the one
// request flow. Native cells — an upstream that speaks Responses gets the client's bytes with only `model`
// replaced — and translated ones: an upstream that speaks only chat completions gets the request
// translated (to-chat/), its answer translated back. A model with neither (Gemini, for now) answers 400
// model_not_supported_on_endpoint. Its other routes (input_tokens, the stored-response paths) are in routes.ts.
import { isJsonObject } from '../../json-object.js';
import type { ClientApi } from '../../pipeline/client-api.js';
import { UpstreamFailureError } from '../../providers/types.js';
import { bindResponses } from './bind.js';
import { countResponsesInput } from './count-input.js';
import { responsesEnvelope, responsesError } from './errors.js';
import { buildNativeResponsesRequest } from './native-request.js';
import { ResponsesOutputMeter } from './output-meter.js';
import { ResponsesClientStream, streamFailure } from './stream.js';
import { responsesCellFor, translatedAnswer, translatedRequest, translatedStream } from './to-chat/index.js';
import { readResponsesUsage, responsesUsage } from './usage.js';
import { validateResponsesRequest, type ResponsesBody } from './validate.js';

/** A reasoning item with encrypted_content: state only the upstream that made it can read. */
function carriesEncryptedReasoning(body: ResponsesBody): boolean {
  return Array.isArray(body.input) && body.input.some((item) => isJsonObject(item) && item.type === 'reasoning' && typeof item.encrypted_content === 'string' && item.encrypted_content !== '');
}

export const openaiResponses: ClientApi<ResponsesBody> = {
  endpoint: 'responses',
  path: '/responses',
  metricsLabel: 'responses',
  modelType: 'chat',
  forwardsRawBody: true,
  cellFor: responsesCellFor,
  // Reasoning an OpenAI upstream encrypted can only go back to a native cell: no fallback to a translated one.
  historyCell: (body) => (carriesEncryptedReasoning(body) ? 'native' : undefined),
  validate: validateResponsesRequest,
  bind: bindResponses,
  modelOf: (body) => body.model,
  streams: (body) => body.stream === true,
  countInput: countResponsesInput,
  // max_output_tokens, else the model's (Codex never sends one) — never more than the model's.
  outputBudget(body, modelMaxOutput) {
    const max = modelMaxOutput!;
    return { maxOutput: typeof body.max_output_tokens === 'number' ? Math.min(body.max_output_tokens, max) : max, choices: 1 };
  },
  withMaxOutput: (body, maxOutput) => ({ ...body, max_output_tokens: maxOutput }),
  buildRequest: (body, candidate) => (responsesCellFor(candidate) === 'translated' ? translatedRequest(body, candidate) : buildNativeResponsesRequest(body, candidate)),
  parseAnswer(json, body, candidate, requestId) {
    if (responsesCellFor(candidate) === 'translated') return translatedAnswer(json, body, candidate, requestId);
    const usage = readResponsesUsage(json.usage);
    const output = Array.isArray(json.output) ? json.output.filter(isJsonObject) : [];
    // A failed response with nothing to show and nothing used is the upstream's failure (retried, or a 502).
    if (json.status === 'failed' && !usage && output.length === 0) throw new UpstreamFailureError(streamFailure(json.error, 'The upstream response failed.'));
    return {
      body: json,
      usage,
      delivered() {
        const meter = new ResponsesOutputMeter();
        for (const item of output) meter.item(item);
        return meter.tokens();
      },
      stored() {
        if (body.store === false || typeof json.id !== 'string') return undefined;
        return { responseId: json.id, itemIds: output.map((item) => item.id).filter((id): id is string => typeof id === 'string') };
      },
    };
  },
  answerWith(answer, charge) {
    answer.body.usage = responsesUsage(charge, answer.usage);
    return answer.body;
  },
  openStream: (body, candidate, requestId) =>
    responsesCellFor(candidate) === 'translated' ? translatedStream(body, candidate, requestId) : new ResponsesClientStream(body, requestId),
  envelope: responsesEnvelope,
  errorFor: responsesError,
};
