// The `gemini` kind: Google's Generative Language API (generateContent, streamGenerateContent, batchEmbedContents).
import { providerKind } from '../kinds.js';
import type { ProviderAdapter } from '../types.js';
import { buildGeminiEmbeddingRequest, parseGeminiEmbeddingResponse } from './embeddings.js';
import { parseGeminiError } from './errors.js';
import { buildGeminiChatRequest } from './request.js';
import { parseGeminiChatResponse } from './response.js';
import { GeminiChatStreamTranslator } from './stream.js';

export const geminiAdapter: ProviderAdapter = {
  ...providerKind('gemini'),
  buildChatRequest: buildGeminiChatRequest,
  parseChatResponse: parseGeminiChatResponse,
  createChatStreamTranslator: (target) => new GeminiChatStreamTranslator(target),
  embedding: { build: buildGeminiEmbeddingRequest, parse: parseGeminiEmbeddingResponse },
  parseError: parseGeminiError,
};
