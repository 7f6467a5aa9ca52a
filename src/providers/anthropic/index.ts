// The `anthropic` kind: the Messages API ({base_url}/v1/messages, x-api-key + anthropic-version).
import { GatewayError } from '../../errors.js';
import type { ProviderAdapter } from '../types.js';
import { parseAnthropicError } from './errors.js';
import { buildAnthropicChatRequest } from './request.js';
import { parseAnthropicChatResponse } from './response.js';
import { AnthropicChatStreamTranslator } from './stream.js';

function noEmbeddings(): never {
  // Anthropic has no embeddings API: a model of type embedding routed here is a config mistake.
  throw new GatewayError('invalid_request', { message: 'This model is served by Anthropic, which offers no embeddings API.' });
}

export const anthropicAdapter: ProviderAdapter = {
  kind: 'anthropic',
  defaultBaseUrl: 'https://api.anthropic.com',
  apiKeyRequired: true,
  defaultApiVersion: undefined,
  embeddings: false,
  buildChatRequest: buildAnthropicChatRequest,
  parseChatResponse: parseAnthropicChatResponse,
  createChatStreamTranslator: (target, body) => new AnthropicChatStreamTranslator(target, body),
  buildEmbeddingRequest: noEmbeddings,
  parseEmbeddingResponse: noEmbeddings,
  parseError: parseAnthropicError,
};
