// Where Gemini requests go: {base_url}/v1beta/models/{model}:{method} (the key, x-goog-api-key, is the transport's).
import type { UpstreamTarget } from '../types.js';

/** The configured model without Google's optional 'models/' resource prefix. */
function modelId(upstreamModel: string): string {
  return upstreamModel.startsWith('models/') ? upstreamModel.slice('models/'.length) : upstreamModel;
}

/** 'models/<id>', as batchEmbedContents wants it inside each request. */
export function geminiModelResource(upstreamModel: string): string {
  return `models/${modelId(upstreamModel)}`;
}

/**
 * The model segment is percent-encoded so a name cannot add path segments or a query, except '@' (legal
 * in a path segment, used in versioned names) which stays readable. ':' is encoded: it starts the method.
 */
export function geminiModelPath(target: UpstreamTarget, method: string, query = ''): string {
  const segment = encodeURIComponent(modelId(target.upstreamModel)).replace(/%40/g, '@');
  return `${target.provider.basePath}/v1beta/models/${segment}:${method}${query}`;
}

export function geminiHeaders(accept: string): Record<string, string> {
  return { 'content-type': 'application/json', accept };
}
