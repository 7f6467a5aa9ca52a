// The `openai` and `openai-compatible` kinds (vLLM, Ollama, DeepSeek, Groq, Mistral, xAI, ...): one
// adapter, two sets of config defaults.
import type { ProviderAdapter, ProviderKindInfo } from '../types.js';
import { parseOpenAIError } from './errors.js';
import { buildOpenAIChatRequest, buildOpenAIEmbeddingRequest } from './request.js';
import { parseOpenAIChatResponse, parseOpenAIEmbeddingResponse } from './response.js';
import { OpenAIChatStreamTranslator } from './stream.js';

export function createOpenAIAdapter(info: ProviderKindInfo): ProviderAdapter {
  return {
    ...info,
    buildChatRequest: (body, target) => buildOpenAIChatRequest(body, target),
    parseChatResponse: parseOpenAIChatResponse,
    createChatStreamTranslator: (target) => new OpenAIChatStreamTranslator(target),
    buildEmbeddingRequest: (body, target) => buildOpenAIEmbeddingRequest(body, target),
    parseEmbeddingResponse: parseOpenAIEmbeddingResponse,
    parseError: parseOpenAIError,
  };
}

export const openaiAdapter = createOpenAIAdapter({
  kind: 'openai',
  defaultBaseUrl: 'https://api.openai.com/v1',
  apiKeyRequired: true,
  defaultApiVersion: undefined,
  embeddings: true,
});

export const openaiCompatibleAdapter = createOpenAIAdapter({
  kind: 'openai-compatible',
  defaultBaseUrl: undefined,
  apiKeyRequired: false,
  defaultApiVersion: undefined,
  embeddings: true,
});
