// Builds OpenAI-style upstream requests: the client's body forwarded whole, with only `model` replaced
// (and, on streams, `stream_options.include_usage` forced on so the final chunk carries exact usage).
// Where the request goes and how it authenticates is the endpoint's business (OpenAI vs. Azure).
import { isJsonObject } from '../../json-object.js';
import type { ChatRequestBody, EmbeddingRequestBody, UpstreamRequest, UpstreamTarget } from '../types.js';

export type OpenAIOperation = 'chat/completions' | 'embeddings';

/** The URL path and credentials of an OpenAI-style API. */
export interface OpenAIEndpoint {
  path(target: UpstreamTarget, operation: OpenAIOperation): string;
  authHeaders(target: UpstreamTarget): Record<string, string>;
}

/** api.openai.com and every OpenAI-compatible server: {base_url}/chat/completions, Bearer auth. */
export const OPENAI_ENDPOINT: OpenAIEndpoint = {
  path: (target, operation) => `${target.provider.basePath}/${operation}`,
  authHeaders: (target): Record<string, string> => (target.provider.apiKey ? { authorization: `Bearer ${target.provider.apiKey}` } : {}),
};

function headersFor(endpoint: OpenAIEndpoint, target: UpstreamTarget, accept: string): Record<string, string> {
  return { 'content-type': 'application/json', accept, ...endpoint.authHeaders(target) };
}

export function buildOpenAIChatRequest(
  body: ChatRequestBody,
  target: UpstreamTarget,
  endpoint: OpenAIEndpoint = OPENAI_ENDPOINT,
): UpstreamRequest {
  const upstreamBody: Record<string, unknown> = { ...body, model: target.upstreamModel };
  const stream = body.stream === true;
  if (stream) {
    const options = isJsonObject(body.stream_options) ? body.stream_options : {};
    upstreamBody.stream_options = { ...options, include_usage: true };
  }
  return {
    method: 'POST',
    path: endpoint.path(target, 'chat/completions'),
    headers: headersFor(endpoint, target, stream ? 'text/event-stream' : 'application/json'),
    body: JSON.stringify(upstreamBody),
  };
}

export function buildOpenAIEmbeddingRequest(
  body: EmbeddingRequestBody,
  target: UpstreamTarget,
  endpoint: OpenAIEndpoint = OPENAI_ENDPOINT,
): UpstreamRequest {
  return {
    method: 'POST',
    path: endpoint.path(target, 'embeddings'),
    headers: headersFor(endpoint, target, 'application/json'),
    body: JSON.stringify({ ...body, model: target.upstreamModel }),
  };
}
