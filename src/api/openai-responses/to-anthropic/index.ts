// The translated cell Responses → Anthropic (product.md §14, "Translated": Codex on Claude). The request is
// the chat cell's translation plus what only Anthropic has (request.ts), written as a Messages request by the
// Anthropic adapter; its answer, whole or streamed, is read back by that adapter (usage with cache reads and
// 5m / 1h writes, thinking blocks with their signatures) and written as a Response by the chat cell's
// writers, with the thinking sealed into the reasoning item's encrypted_content (envelope.ts). What is
// carried and what is lost: docs/adr/0045-responses-to-anthropic.md.
import { isJsonObject, type JsonObject } from '../../../json-object.js';
import type { ApiAnswer } from '../../../pipeline/client-api.js';
import type { UpstreamRequest } from '../../../providers/types.js';
import type { Candidate } from '../../../routing/resolve-route.js';
import { ResponsesOutputMeter } from '../output-meter.js';
import type { ResponsesBody } from '../validate.js';
import { responseOfCompletion, type SealThinking } from '../to-chat/answer.js';
import { ChatResponsesStream } from '../to-chat/stream.js';
import { chatTools } from '../to-chat/tools.js';
import { asResponsesUsage } from '../to-chat/usage.js';
import { COUNT_BUDGET_MS, TokenTally } from '../../../tokens/token-tally.js';
import { envelopeKey, looksLikeEnvelope, sealThinking } from './envelope.js';
import { anthropicChatRequestOf } from './request.js';

/** An Anthropic upstream that does not serve Responses itself. */
export function reachesAnthropic(candidate: Candidate): boolean {
  return candidate.provider.kind === 'anthropic' && candidate.provider.serves.includes('messages');
}

/** A reasoning item carrying a Tollgate envelope: thinking only an Anthropic upstream can take back. */
export function carriesEnvelope(body: ResponsesBody): boolean {
  return Array.isArray(body.input) && body.input.some((item) => isJsonObject(item) && item.type === 'reasoning' && looksLikeEnvelope(item.encrypted_content));
}

function sealFor(candidate: Candidate): SealThinking {
  const key = envelopeKey(candidate.provider);
  return (blocks) => sealThinking(key, blocks);
}

function namespacesOf(body: ResponsesBody): ReadonlyMap<string, string> {
  return chatTools(body, new Set()).namespaces;
}

export function anthropicRequest(body: ResponsesBody, candidate: Candidate): UpstreamRequest {
  const chat = anthropicChatRequestOf(body, candidate);
  const request = candidate.adapter.buildChatRequest(chat.body, candidate.target);
  return chat.dropped.length === 0 ? request : { ...request, dropped: [...(request.dropped ?? []), ...chat.dropped] };
}

export function anthropicAnswer(json: JsonObject, body: ResponsesBody, candidate: Candidate, requestId: string): ApiAnswer {
  const parsed = candidate.adapter.parseChatResponse(json, candidate.target);
  const usage = asResponsesUsage(parsed.usage);
  const response = responseOfCompletion(parsed.body, usage, body, `resp_${requestId}`, namespacesOf(body), sealFor(candidate));
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

export function anthropicStream(body: ResponsesBody, candidate: Candidate, requestId: string): ChatResponsesStream {
  // The chat body tells the adapter's translator about JSON mode (a json_object format is its json_response
  // tool); it is the one buildRequest made for this attempt, made again (a pure function of the body).
  const translator = candidate.adapter.createChatStreamTranslator(candidate.target, anthropicChatRequestOf(body, candidate).body);
  return new ChatResponsesStream(translator, body, requestId, namespacesOf(body), new TokenTally(COUNT_BUDGET_MS), sealFor(candidate));
}
