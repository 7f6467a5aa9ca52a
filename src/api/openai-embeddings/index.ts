// POST /v1/embeddings: the OpenAI embeddings API on the one request flow — billed on input tokens only.
import { GatewayError } from '../../errors.js';
import type { ClientApi } from '../../pipeline/client-api.js';
import type { EmbeddingRequestBody, EmbeddingTranslator } from '../../providers/types.js';
import type { Candidate } from '../../routing/resolve-route.js';
import { openaiUsage } from '../openai-usage.js';
import { countEmbeddingInput } from './count-input.js';
import { validateEmbeddingRequest } from './validate.js';

/** The kind's embeddings translation (config routes embedding models only to kinds that have one). */
function translatorOf(candidate: Candidate): EmbeddingTranslator {
  const translator = candidate.adapter.embedding;
  if (!translator) throw new Error(`provider kind ${candidate.provider.kind} has no embeddings`);
  return translator;
}

function noStream(): never {
  throw new GatewayError('invalid_request', { message: 'Embeddings are not streamed.' });
}

export const openaiEmbeddings: ClientApi<EmbeddingRequestBody> = {
  endpoint: 'embeddings',
  path: '/embeddings',
  metricsLabel: 'embeddings',
  modelType: 'embedding',
  validate: validateEmbeddingRequest,
  modelOf: (body) => body.model,
  streams: () => false,
  countInput: (body) => countEmbeddingInput(body.input),
  // No output side: the hold is the counted input at the input price.
  outputBudget: () => undefined,
  withMaxOutput: (body) => body,
  buildRequest: (body, candidate) => translatorOf(candidate).build(body, candidate.target),
  parseAnswer(json, body, candidate) {
    // Without upstream usage (Gemini reports none) the gateway's own count is billed, marked estimated.
    const parsed = translatorOf(candidate).parse(json, body, candidate.target);
    return { body: parsed.body, usage: parsed.usage, delivered: () => 0 };
  },
  answerWith(answer, charge) {
    answer.body.usage = openaiUsage(charge, answer.usage, false);
    return answer.body;
  },
  openStream: noStream,
  envelope: (error: GatewayError) => error.toBody(),
};
