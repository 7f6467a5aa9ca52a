// The translated cell of the Responses API (product.md §14, "Translated"): Codex (or any Responses
// client) on a model whose upstream speaks only chat completions — a local or OpenAI-compatible server.
// The request goes as a chat request, written for that upstream by its own chat adapter; its answer,
// whole or streamed, comes back as a Response. One translator for the pair; what it carries and loses:
// docs/adr/0044-responses-to-chat.md.
import type { JsonObject } from '../../../json-object.js';
import type { ApiAnswer } from '../../../pipeline/client-api.js';
import type { UpstreamRequest } from '../../../providers/types.js';
import type { Candidate } from '../../../routing/resolve-route.js';
import { ResponsesOutputMeter } from '../output-meter.js';
import type { ResponsesBody } from '../validate.js';
import { responseOfCompletion } from './answer.js';
import { chatRequestOf } from './request.js';
import { ChatResponsesStream } from './stream.js';
import { chatTools } from './tools.js';
import { asResponsesUsage } from './usage.js';

/** How the Responses API reaches `candidate`: natively when it serves Responses, translated when its kind's chat completions can take it. */
export function responsesCellFor(candidate: Candidate): 'native' | 'translated' | undefined {
  const { serves } = candidate.provider;
  if (serves.includes('responses')) return 'native';
  return serves.includes('chat') && candidate.adapter.chatTranslation?.from.includes('responses') ? 'translated' : undefined;
}

/** The functions the request flattened out of namespaces (its tools were checked when its first request was built). */
function namespacesOf(body: ResponsesBody): ReadonlyMap<string, string> {
  return chatTools(body, new Set()).namespaces;
}

export function translatedRequest(body: ResponsesBody, candidate: Candidate): UpstreamRequest {
  const translation = candidate.adapter.chatTranslation;
  // cellFor keeps only candidates whose kind has a translation.
  if (!translation) throw new Error(`provider kind ${candidate.provider.kind} has no chat translation`);
  const chat = chatRequestOf(body, translation, candidate.target.maxOutputTokens);
  const request = candidate.adapter.buildChatRequest(chat.body, candidate.target);
  return chat.dropped.length === 0 ? request : { ...request, dropped: [...(request.dropped ?? []), ...chat.dropped] };
}

export function translatedAnswer(json: JsonObject, body: ResponsesBody, candidate: Candidate, requestId: string): ApiAnswer {
  const parsed = candidate.adapter.parseChatResponse(json, candidate.target);
  const usage = asResponsesUsage(parsed.usage);
  const response = responseOfCompletion(parsed.body, usage, body, `resp_${requestId}`, namespacesOf(body));
  return {
    body: response,
    usage,
    delivered() {
      const meter = new ResponsesOutputMeter();
      for (const item of response.output as JsonObject[]) meter.item(item);
      return meter.tokens();
    },
  };
}

export function translatedStream(body: ResponsesBody, candidate: Candidate, requestId: string): ChatResponsesStream {
  return new ChatResponsesStream(candidate.adapter.createChatStreamTranslator(candidate.target), body, requestId, namespacesOf(body));
}
