// POST /v1/responses: the OpenAI Responses API (Codex CLI, the AI SDK's default OpenAI provider) on the one
// request flow, in native cells only — an upstream that speaks Responses gets the client's bytes with only
// `model` replaced; a model none of whose upstreams does answers 400 model_not_supported_on_endpoint until
// a translation exists. Its other routes (input_tokens, the stored-response paths) are in routes.ts.
import { isJsonObject } from '../../json-object.js';
import type { ClientApi } from '../../pipeline/client-api.js';
import { UpstreamFailureError } from '../../providers/types.js';
import { bindResponses } from './bind.js';
import { countResponsesInput } from './count-input.js';
import { responsesEnvelope, responsesError } from './errors.js';
import { buildNativeResponsesRequest, responsesCell } from './native-request.js';
import { ResponsesOutputMeter } from './output-meter.js';
import { ResponsesClientStream, streamFailure } from './stream.js';
import { readResponsesUsage, responsesUsage } from './usage.js';
import { validateResponsesRequest, type ResponsesBody } from './validate.js';

export const openaiResponses: ClientApi<ResponsesBody> = {
  endpoint: 'responses',
  path: '/responses',
  metricsLabel: 'responses',
  modelType: 'chat',
  forwardsRawBody: true,
  cellFor: responsesCell,
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
  buildRequest: (body, candidate) => buildNativeResponsesRequest(body, candidate),
  parseAnswer(json, body) {
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
  openStream: (body, _candidate, requestId) => new ResponsesClientStream(body, requestId),
  envelope: responsesEnvelope,
  errorFor: responsesError,
};
