// A Responses request → the canonical chat request the Anthropic adapter writes as a Messages request
// (docs/adr/0045-responses-to-anthropic.md). The conversation, tools, tool ids and limits are the chat
// cell's translation (to-chat/: instructions and system/developer items → system, function_call /
// function_call_output → tool_use / tool_result with ids valid for both APIs, namespaces flattened, hosted
// tools dropped unless forced, max_output_tokens else the model's → max_tokens, parallel_tool_calls false →
// disable_parallel_tool_use). What only Anthropic has rides as Anthropic's own fields, which the adapter
// forwards unchanged:
//  - reasoning items whose envelope verifies → the original thinking blocks, before that turn's text and
//    tool_use (a tampered or foreign envelope is dropped);
//  - reasoning.effort → Claude ≥ 4.6: `thinking: {type: "adaptive", display: "summarized"}` +
//    `output_config.effort`, the chat path's ids and effort mapping (providers/anthropic/adaptive-thinking.ts,
//    ADR 0046; 4.7+ rejects a budget); older Claude: the adapter's `budget_tokens` mapping of
//    reasoning_effort. Thinking stays off when the turn being continued called tools with no thinking
//    restored (Anthropic would refuse it);
//  - text.format json_schema → `output_config.format`;
//  - prompt_cache_key → a top-level `cache_control: {type: "ephemeral"}`: the whole prompt is cached, so a
//    Codex session's later turns read it at the cache price.
import { isJsonObject, type JsonObject } from '../../../json-object.js';
import { adaptiveEffort, adaptiveThinking, takesAdaptiveThinking } from '../../../providers/anthropic/adaptive-thinking.js';
import { continuesToolUseWithoutThinking } from '../../../providers/anthropic/request.js';
import type { ChatTranslation } from '../../../providers/kinds.js';
import type { Candidate } from '../../../routing/resolve-route.js';
import { chatRequestOf, type ChatRequest } from '../to-chat/request.js';
import type { ResponsesBody } from '../validate.js';
import { envelopeKey, openThinking } from './envelope.js';

/** Anthropic's output limit is `max_tokens`. */
const TRANSLATION: ChatTranslation = { from: ['responses'], outputLimit: 'max_tokens' };

/** True when the request asks for a prompt cache (Codex sends its session id as prompt_cache_key). */
export function asksPromptCache(body: JsonObject): boolean {
  return typeof body.prompt_cache_key === 'string' && body.prompt_cache_key !== '';
}

export function anthropicChatRequestOf(body: ResponsesBody, candidate: Candidate): ChatRequest {
  const key = envelopeKey(candidate.provider);
  const chat = chatRequestOf(body, TRANSLATION, candidate.target.maxOutputTokens, (item) => openThinking(key, item.encrypted_content));
  const out: JsonObject = { ...chat.body };
  const dropped = new Set(chat.dropped);
  const outputConfig: JsonObject = {};

  if (takesAdaptiveThinking(candidate.target.upstreamModel)) {
    delete out.reasoning_effort;
    const effort = adaptiveEffort(isJsonObject(body.reasoning) ? body.reasoning.effort : undefined);
    if (effort !== undefined) {
      if (continuesToolUseWithoutThinking(chat.body.messages)) {
        dropped.add('reasoning.effort');
      } else {
        out.thinking = adaptiveThinking();
        outputConfig.effort = effort;
        // Anthropic refuses a temperature other than 1 with thinking.
        if (out.temperature !== undefined) dropped.add('temperature');
        delete out.temperature;
      }
    }
  }

  const format = isJsonObject(out.response_format) ? out.response_format : undefined;
  if (format?.type === 'json_schema' && isJsonObject(format.json_schema)) {
    delete out.response_format;
    outputConfig.format = { type: 'json_schema', schema: format.json_schema.schema };
  }
  if (Object.keys(outputConfig).length > 0) out.output_config = outputConfig;

  dropped.delete('prompt_cache_key');
  if (asksPromptCache(body)) out.cache_control = { type: 'ephemeral' };
  return { body: out as ChatRequest['body'], dropped: [...dropped], namespaces: chat.namespaces };
}
