// Builds OpenAI-style upstream requests: the client's body forwarded whole, with only `model` replaced
// (and, on streams, `stream_options.include_usage` forced on so the final chunk carries exact usage).
import { isJsonObject } from '../../json-object.js';
import type { ChatRequestBody, EmbeddingRequestBody, UpstreamRequest, UpstreamTarget } from '../types.js';

function headersFor(target: UpstreamTarget, accept: string): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept };
  if (target.provider.apiKey) headers.authorization = `Bearer ${target.provider.apiKey}`;
  return headers;
}

export function buildOpenAIChatRequest(body: ChatRequestBody, target: UpstreamTarget): UpstreamRequest {
  const upstreamBody: Record<string, unknown> = { ...body, model: target.upstreamModel };
  const stream = body.stream === true;
  if (stream) {
    const options = isJsonObject(body.stream_options) ? body.stream_options : {};
    upstreamBody.stream_options = { ...options, include_usage: true };
  }
  return {
    method: 'POST',
    path: `${target.provider.basePath}/chat/completions`,
    headers: headersFor(target, stream ? 'text/event-stream' : 'application/json'),
    body: JSON.stringify(upstreamBody),
  };
}

export function buildOpenAIEmbeddingRequest(body: EmbeddingRequestBody, target: UpstreamTarget): UpstreamRequest {
  return {
    method: 'POST',
    path: `${target.provider.basePath}/embeddings`,
    headers: headersFor(target, 'application/json'),
    body: JSON.stringify({ ...body, model: target.upstreamModel }),
  };
}
