// The `openai` and `openai-compatible` kinds (vLLM, Ollama, DeepSeek, Groq, Mistral, xAI, ...): one
// adapter, two sets of config defaults.
import { providerKind, type ProviderKindInfo } from '../kinds.js';
import type { ProviderAdapter } from '../types.js';
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
    embedding: { build: (body, target) => buildOpenAIEmbeddingRequest(body, target), parse: parseOpenAIEmbeddingResponse },
    parseError: parseOpenAIError,
  };
}

export const openaiAdapter = createOpenAIAdapter(providerKind('openai'));

export const openaiCompatibleAdapter = createOpenAIAdapter(providerKind('openai-compatible'));
