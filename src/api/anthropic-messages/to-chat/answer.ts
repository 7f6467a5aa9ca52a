// A whole chat completion (already read by the candidate's adapter: its usage, reasoning renamed to
// `reasoning_content`, the client's model) → a Messages `Message`: reasoning as a thinking block with the
// gateway's mark, the text (or the refusal), each tool call as a tool_use block; its stop reason mapped; its
// usage in Anthropic's convention (usage.ts: input without cache reads), the cost added when settled.
import { randomUUID } from 'node:crypto';
import { isJsonObject, type JsonObject } from '../../../json-object.js';
import { contentText } from '../../../providers/content-text.js';
import { malformed, type ReportedUsage } from '../../../providers/types.js';
import { thinkingMark } from '../thinking.js';
import { anthropicCounts } from '../usage.js';
import { stopReasonOf } from './stop-reason.js';
import { messagesToolUseId } from './tool-ids.js';
import { toolInput } from './tool-input.js';

/** A Message id from the upstream's answer id (`msg_chatcmpl-…`). */
export function messageIdOf(id: unknown): string {
  return `msg_${typeof id === 'string' && id !== '' ? id : randomUUID().replaceAll('-', '')}`;
}

function toolUse(call: unknown, index: number, messageId: string): JsonObject | undefined {
  if (!isJsonObject(call) || !isJsonObject(call.function)) return undefined;
  const fn = call.function;
  return { type: 'tool_use', id: messagesToolUseId(call.id, `${messageId}:${index}`), name: typeof fn.name === 'string' ? fn.name : '', input: toolInput(fn.arguments) };
}

/** The Message of `completion`; `stops`: the request's stop_sequences. */
export function messageOfCompletion(completion: JsonObject, usage: ReportedUsage | null, stops: readonly unknown[]): JsonObject {
  const choice = Array.isArray(completion.choices) ? completion.choices[0] : undefined;
  if (!isJsonObject(choice) || !isJsonObject(choice.message)) throw malformed('chat completion');
  const message = choice.message;
  const id = messageIdOf(completion.id);
  const content: JsonObject[] = [];
  if (typeof message.reasoning_content === 'string' && message.reasoning_content !== '') {
    content.push({ type: 'thinking', thinking: message.reasoning_content, signature: thinkingMark(message.reasoning_content) });
  }
  const text = contentText(message.content);
  if (text !== '') content.push({ type: 'text', text });
  const refused = typeof message.refusal === 'string' && message.refusal !== '';
  if (refused) content.push({ type: 'text', text: message.refusal });
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.map((call, index) => toolUse(call, index, id)).filter((block) => block !== undefined) : [];
  content.push(...calls);
  return {
    id,
    type: 'message',
    role: 'assistant',
    model: completion.model,
    content,
    ...stopReasonOf({ finish: choice.finish_reason, toolCalls: calls.length > 0, refused, matched: choice.stop_reason, stops }),
    usage: usage ? anthropicCounts(usage.tokens) : {},
  };
}
