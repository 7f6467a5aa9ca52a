// Builds OpenAI-style upstream requests: the client's body forwarded whole, with only `model` replaced
// (and, on streams, `stream_options.include_usage` forced on so the final chunk carries exact usage).
// Where the request goes is the endpoint's business (OpenAI vs. Azure); its credential, the transport's.
import { isJsonObject } from '../../json-object.js';
import type { ChatRequestBody, EmbeddingRequestBody, TranslatedRequest, UpstreamTarget } from '../types.js';

export type OpenAIOperation = 'chat/completions' | 'embeddings';

/** The URL path of an OpenAI-style API (its credential is the transport's: upstream/auth.ts). */
export interface OpenAIEndpoint {
  path(target: UpstreamTarget, operation: OpenAIOperation): string;
}

/** api.openai.com and every OpenAI-compatible server: {base_url}/chat/completions. */
export const OPENAI_ENDPOINT: OpenAIEndpoint = {
  path: (target, operation) => `${target.provider.basePath}/${operation}`,
};

function headersFor(accept: string): Record<string, string> {
  return { 'content-type': 'application/json', accept };
}

export function buildOpenAIChatRequest(
  body: ChatRequestBody,
  target: UpstreamTarget,
  endpoint: OpenAIEndpoint = OPENAI_ENDPOINT,
): TranslatedRequest {
  const upstreamBody: Record<string, unknown> = { ...body, model: target.upstreamModel };
  const stream = body.stream === true;
  if (stream) {
    const options = isJsonObject(body.stream_options) ? body.stream_options : {};
    upstreamBody.stream_options = { ...options, include_usage: true };
  }
  return {
    method: 'POST',
    path: endpoint.path(target, 'chat/completions'),
    headers: headersFor(stream ? 'text/event-stream' : 'application/json'),
    body: JSON.stringify(upstreamBody),
  };
}

export function buildOpenAIEmbeddingRequest(
  body: EmbeddingRequestBody,
  target: UpstreamTarget,
  endpoint: OpenAIEndpoint = OPENAI_ENDPOINT,
): TranslatedRequest {
  return {
    method: 'POST',
    path: endpoint.path(target, 'embeddings'),
    headers: headersFor('application/json'),
    body: JSON.stringify({ ...body, model: target.upstreamModel }),
  };
}
