// The `anthropic` kind: the Messages API ({base_url}/v1/messages, x-api-key + anthropic-version).
import { providerKind } from '../kinds.js';
import type { ProviderAdapter } from '../types.js';
import { parseAnthropicError } from './errors.js';
import { buildAnthropicChatRequest } from './request.js';
import { parseAnthropicChatResponse } from './response.js';
import { AnthropicChatStreamTranslator } from './stream.js';

export const anthropicAdapter: ProviderAdapter = {
  ...providerKind('anthropic'),
  buildChatRequest: buildAnthropicChatRequest,
  parseChatResponse: parseAnthropicChatResponse,
  createChatStreamTranslator: (target, body) => new AnthropicChatStreamTranslator(target, body),
  parseError: parseAnthropicError,
};
