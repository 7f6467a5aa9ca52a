// Reads OpenAI-style non-stream responses (chat completions and embeddings) into the client's shape.
import { isJsonObject } from '../../json-object.js';
import { malformed, UpstreamFailureError, type EmbeddingRequestBody, type ParsedResponse, type UpstreamTarget } from '../types.js';
import { floatsToBase64 } from '../float-base64.js';
import { readOpenAIErrorObject } from './errors.js';
import { normaliseCompletionChoice, normaliseEnvelope } from './normalize.js';
import { withModifiers, type ModifierReport } from '../usage-report.js';
import { mergeOpenAIModifiers, readOpenAIUsage } from './usage.js';

export function parseOpenAIChatResponse(json: unknown, target: UpstreamTarget): ParsedResponse {
  if (!isJsonObject(json)) throw malformed('chat completion');
  if (!Array.isArray(json.choices)) {
    if (json.error !== undefined) throw new UpstreamFailureError(readOpenAIErrorObject(json.error, 502));
    throw malformed('chat completion');
  }
  const served: { modifiers?: ModifierReport } = {};
  mergeOpenAIModifiers(served, json);
  normaliseEnvelope(json, target.clientModel);
  for (const choice of json.choices) if (isJsonObject(choice)) normaliseCompletionChoice(choice);
  const usage = readOpenAIUsage(json.usage);
  return { body: json, usage: usage && withModifiers(usage, served.modifiers) };
}

export function parseOpenAIEmbeddingResponse(json: unknown, body: EmbeddingRequestBody, target: UpstreamTarget): ParsedResponse {
  if (!isJsonObject(json) || !Array.isArray(json.data)) {
    if (isJsonObject(json) && json.error !== undefined) throw new UpstreamFailureError(readOpenAIErrorObject(json.error, 502));
    throw malformed('embedding response');
  }
  json.model = target.clientModel;
  // Some OpenAI-compatible servers ignore encoding_format; the SDKs default to base64 and would
  // misread a float array, so the gateway encodes it as OpenAI would have.
  if (body.encoding_format === 'base64') {
    for (const item of json.data) {
      if (isJsonObject(item) && Array.isArray(item.embedding)) item.embedding = floatsToBase64(item.embedding);
    }
  }
  const usage = readOpenAIUsage(json.usage);
  return {
    body: json,
    usage: usage && {
      tokens: { input: usage.tokens.input, cachedInput: 0, output: 0, reasoning: 0 },
      openai: { prompt_tokens: usage.tokens.input, total_tokens: usage.tokens.input },
    },
  };
}
