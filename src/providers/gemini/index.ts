// The `gemini` kind: Google's Generative Language API (generateContent, streamGenerateContent, batchEmbedContents).
import type { ProviderAdapter } from '../types.js';
import { buildGeminiEmbeddingRequest, parseGeminiEmbeddingResponse } from './embeddings.js';
import { parseGeminiError } from './errors.js';
import { buildGeminiChatRequest } from './request.js';
import { parseGeminiChatResponse } from './response.js';
import { GeminiChatStreamTranslator } from './stream.js';

export const geminiAdapter: ProviderAdapter = {
  kind: 'gemini',
  defaultBaseUrl: 'https://generativelanguage.googleapis.com',
  apiKeyRequired: true,
  defaultApiVersion: undefined,
  embeddings: true,
  buildChatRequest: buildGeminiChatRequest,
  parseChatResponse: parseGeminiChatResponse,
  createChatStreamTranslator: (target) => new GeminiChatStreamTranslator(target),
  buildEmbeddingRequest: buildGeminiEmbeddingRequest,
  parseEmbeddingResponse: parseGeminiEmbeddingResponse,
  parseError: parseGeminiError,
};
