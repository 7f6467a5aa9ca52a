// OpenAI tool calls made from Gemini function calls: generated ids (Gemini sends none) and the thought
// signature, carried as `extra_content.google.thought_signature` — the field Google's own OpenAI-compatible
// endpoint uses — so a client that sends the conversation back unchanged returns it to Gemini.
import { randomUUID } from 'node:crypto';
import { isJsonObject, type JsonObject } from '../../json-object.js';

export function newToolCallId(): string {
  return `call_${randomUUID().replace(/-/g, '')}`;
}

/** The signature a client echoed on a tool call, if any. */
export function thoughtSignatureOf(call: JsonObject): string | undefined {
  const extra = call.extra_content;
  const google = isJsonObject(extra) ? extra.google : undefined;
  const signature = isJsonObject(google) ? google.thought_signature : undefined;
  return typeof signature === 'string' && signature !== '' ? signature : undefined;
}

/** A complete tool call (non-stream), or the opening delta of a streamed one (with `index`). */
export function openAIToolCall(name: string, args: string, signature: unknown, index?: number): JsonObject {
  const call: JsonObject = index === undefined ? {} : { index };
  call.id = newToolCallId();
  call.type = 'function';
  call.function = { name, arguments: args };
  if (typeof signature === 'string' && signature !== '') call.extra_content = { google: { thought_signature: signature } };
  return call;
}
