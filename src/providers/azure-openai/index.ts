// The `azure-openai` kind: the OpenAI API on Azure deployments. Requests go to
// {base_url}/openai/deployments/{deployment}/{operation}?api-version=... with an `api-key` header; the
// replies are OpenAI's, with Azure's content-filter annotations removed so clients get clean chunks.
import { isJsonObject, type JsonObject } from '../../json-object.js';
import type { SseEvent } from '../framing/sse.js';
import { providerKind } from '../kinds.js';
import { parseOpenAIError } from '../openai/errors.js';
import { buildOpenAIChatRequest, buildOpenAIEmbeddingRequest, type OpenAIEndpoint } from '../openai/request.js';
import { parseOpenAIChatResponse, parseOpenAIEmbeddingResponse } from '../openai/response.js';
import { OpenAIChatStreamTranslator } from '../openai/stream.js';
import type { ChatStreamTranslator, ParsedResponse, ProviderAdapter, ReportedUsage, UpstreamTarget } from '../types.js';

const AZURE_ENDPOINT: OpenAIEndpoint = {
  path: (target, operation) =>
    `${target.provider.basePath}/openai/deployments/${encodeURIComponent(target.upstreamModel)}/${operation}` +
    `?api-version=${encodeURIComponent(target.provider.apiVersion ?? '')}`,
};

/** Azure annotates every choice (and the prompt) with content-filter verdicts; a refusal already shows
 * as finish_reason "content_filter", so the annotations are dropped. */
function stripFilterResults(body: JsonObject): void {
  delete body.prompt_filter_results;
  delete body.prompt_annotations;
  if (!Array.isArray(body.choices)) return;
  for (const choice of body.choices) if (isJsonObject(choice)) delete choice.content_filter_results;
}

class AzureChatStreamTranslator implements ChatStreamTranslator {
  private readonly inner: OpenAIChatStreamTranslator;

  constructor(target: UpstreamTarget) {
    this.inner = new OpenAIChatStreamTranslator(target);
  }

  get finished(): boolean {
    return this.inner.finished;
  }

  get usage(): ReportedUsage | null {
    return this.inner.usage;
  }

  get id(): string {
    return this.inner.id;
  }

  get created(): number {
    return this.inner.created;
  }

  onEvent(event: SseEvent): JsonObject | null {
    const chunk = this.inner.onEvent(event);
    if (chunk) stripFilterResults(chunk);
    return chunk;
  }
}

function parseAzureChatResponse(json: unknown, target: UpstreamTarget): ParsedResponse {
  const parsed = parseOpenAIChatResponse(json, target);
  stripFilterResults(parsed.body);
  return parsed;
}

export const azureOpenAIAdapter: ProviderAdapter = {
  ...providerKind('azure-openai'),
  buildChatRequest: (body, target) => buildOpenAIChatRequest(body, target, AZURE_ENDPOINT),
  parseChatResponse: parseAzureChatResponse,
  createChatStreamTranslator: (target) => new AzureChatStreamTranslator(target),
  embedding: { build: (body, target) => buildOpenAIEmbeddingRequest(body, target, AZURE_ENDPOINT), parse: parseOpenAIEmbeddingResponse },
  parseError: parseOpenAIError,
};
