// OpenAI embeddings ⇄ Gemini batchEmbedContents: one request per input string, vectors back in order.
import { GatewayError } from '../../errors.js';
import { isJsonObject, type JsonObject } from '../../json-object.js';
import { floatsToBase64 } from '../float-base64.js';
import { malformed, UpstreamFailureError, type EmbeddingRequestBody, type ParsedResponse, type TranslatedRequest, type UpstreamTarget } from '../types.js';
import { readGeminiErrorObject } from './errors.js';
import { geminiHeaders, geminiModelPath, geminiModelResource } from './endpoint.js';

// Read here or by the pipeline; anything else in the body has no place in batchEmbedContents.
const USED = new Set(['model', 'input', 'dimensions', 'encoding_format', 'taskType', 'title']);

function inputTexts(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.every((item) => typeof item === 'string')) return input;
  // Token arrays are another tokenizer's ids: Gemini takes text only. Thrown before the hold.
  throw new GatewayError('invalid_request', {
    message: "Invalid 'input': this model takes text; token-array input cannot be sent to it.",
    param: 'input',
  });
}

export function buildGeminiEmbeddingRequest(body: EmbeddingRequestBody, target: UpstreamTarget): TranslatedRequest {
  const model = geminiModelResource(target.upstreamModel);
  const extra: JsonObject = {};
  if (typeof body.dimensions === 'number') extra.outputDimensionality = body.dimensions;
  // Gemini's own embedding options (RETRIEVAL_QUERY, ...), accepted at the top level like other native fields.
  if (typeof body.taskType === 'string') extra.taskType = body.taskType;
  if (typeof body.title === 'string') extra.title = body.title;
  const requests = inputTexts(body.input).map((text) => ({ model, content: { parts: [{ text }] }, ...extra }));
  return {
    method: 'POST',
    path: geminiModelPath(target, 'batchEmbedContents'),
    headers: geminiHeaders('application/json'),
    body: JSON.stringify({ requests }),
    dropped: Object.keys(body).filter((key) => !USED.has(key)),
  };
}

/** Gemini reports no token counts for embeddings: usage is null and the pipeline counts the input itself. */
export function parseGeminiEmbeddingResponse(json: unknown, body: EmbeddingRequestBody, target: UpstreamTarget): ParsedResponse {
  if (isJsonObject(json) && json.error !== undefined) throw new UpstreamFailureError(readGeminiErrorObject(json.error, 502));
  if (!isJsonObject(json) || !Array.isArray(json.embeddings)) throw malformed('embedding response');
  // One vector per input, in order: anything else would pair vectors with the wrong texts.
  if (json.embeddings.length !== inputTexts(body.input).length) throw malformed('embedding response');
  const base64 = body.encoding_format === 'base64';
  const data = json.embeddings.map((item: unknown, index) => {
    const values = isJsonObject(item) && Array.isArray(item.values) ? item.values : undefined;
    if (!values) throw malformed('embedding response');
    return { object: 'embedding', index, embedding: base64 ? floatsToBase64(values) : values };
  });
  return { body: { object: 'list', data, model: target.clientModel }, usage: null };
}
