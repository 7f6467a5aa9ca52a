// The translated cell of the Messages API (product.md §14): a request whose upstream speaks only chat
// completions (kinds openai, azure-openai, openai-compatible) goes as a chat request, written for that
// upstream by its own chat adapter, and its answer — whole or streamed — comes back in Messages shapes.
// One translator for the pair; what it carries and loses: docs/adr/0043-messages-to-chat.md.
import type { JsonObject } from '../../../json-object.js';
import type { ApiAnswer } from '../../../pipeline/client-api.js';
import type { UpstreamRequest } from '../../../providers/types.js';
import type { Candidate } from '../../../routing/resolve-route.js';
import { messageOutputTokens } from '../answer.js';
import type { MessagesRequestBody } from '../validate.js';
import { messageOfCompletion } from './answer.js';
import { chatRequestOf } from './request.js';
import { ChatMessagesStream } from './stream.js';

/** The request's stop_sequences (a stop reason names the one the upstream met). */
function stopsOf(body: MessagesRequestBody): readonly unknown[] {
  return Array.isArray(body.stop_sequences) ? body.stop_sequences : [];
}

export function translatedRequest(body: MessagesRequestBody, candidate: Candidate): UpstreamRequest {
  const translation = candidate.adapter.chatTranslation;
  // cellFor keeps only candidates whose kind has a translation.
  if (!translation) throw new Error(`provider kind ${candidate.provider.kind} has no chat translation`);
  const chat = chatRequestOf(body, translation, candidate.target.maxOutputTokens);
  const request = candidate.adapter.buildChatRequest(chat.body, candidate.target);
  return chat.dropped.length === 0 ? request : { ...request, dropped: [...(request.dropped ?? []), ...chat.dropped] };
}

export function translatedAnswer(json: JsonObject, body: MessagesRequestBody, candidate: Candidate): ApiAnswer {
  const parsed = candidate.adapter.parseChatResponse(json, candidate.target);
  const message = messageOfCompletion(parsed.body, parsed.usage, stopsOf(body));
  return { body: message, usage: parsed.usage, delivered: () => messageOutputTokens(message) };
}

export function translatedStream(body: MessagesRequestBody, candidate: Candidate, requestId: string, inputTokens: number): ChatMessagesStream {
  return new ChatMessagesStream(candidate.adapter.createChatStreamTranslator(candidate.target), candidate.target.clientModel, requestId, inputTokens, stopsOf(body));
}
