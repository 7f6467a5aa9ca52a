// A whole chat completion (already read by the candidate's adapter: its usage, reasoning renamed to
// `reasoning_content`) → a Response: a `reasoning` item whose summary is the upstream's reasoning text,
// a `message` item with the text (or the refusal), one `function_call` item per tool call (call ids
// mapped back, a flattened namespace restored), its status from the finish reason, its usage in the
// Responses convention (the cost is added when settled).
import { isJsonObject, type JsonObject } from '../../../json-object.js';
import { contentText } from '../../../providers/content-text.js';
import { malformed, type ReportedUsage } from '../../../providers/types.js';
import type { ResponsesBody } from '../validate.js';
import { responsesCallId } from './call-ids.js';
import { endOf, responseObject } from './response.js';

export function reasoningItem(id: string, text: string): JsonObject {
  return { id, type: 'reasoning', summary: [{ type: 'summary_text', text }] };
}

export function messageItem(id: string, status: string, parts: readonly JsonObject[]): JsonObject {
  return { id, type: 'message', status, role: 'assistant', content: [...parts] };
}

export function textPart(text: string): JsonObject {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

export function functionCallItem(id: string, status: string, callId: string, name: string, args: string, namespace: string | undefined): JsonObject {
  return { id, type: 'function_call', status, call_id: callId, name, arguments: args, ...(namespace === undefined ? {} : { namespace }) };
}

/** The Response of `completion`; `responseId`: `resp_` + the request id; `namespaces`: chatRequestOf's. */
export function responseOfCompletion(completion: JsonObject, usage: ReportedUsage | null, body: ResponsesBody, responseId: string, namespaces: ReadonlyMap<string, string>): JsonObject {
  const choice = Array.isArray(completion.choices) ? completion.choices[0] : undefined;
  if (!isJsonObject(choice) || !isJsonObject(choice.message)) throw malformed('chat completion');
  const message = choice.message;
  const suffix = responseId.slice('resp_'.length);
  const output: JsonObject[] = [];
  if (typeof message.reasoning_content === 'string' && message.reasoning_content !== '') output.push(reasoningItem(`rs_${suffix}`, message.reasoning_content));
  const parts: JsonObject[] = [];
  const text = contentText(message.content);
  if (text !== '') parts.push(textPart(text));
  if (typeof message.refusal === 'string' && message.refusal !== '') parts.push({ type: 'refusal', refusal: message.refusal });
  if (parts.length > 0) output.push(messageItem(`msg_${suffix}`, 'completed', parts));
  if (Array.isArray(message.tool_calls)) {
    message.tool_calls.forEach((call, index) => {
      if (!isJsonObject(call) || !isJsonObject(call.function)) return;
      const fn = call.function;
      const name = typeof fn.name === 'string' ? fn.name : '';
      const args = typeof fn.arguments === 'string' ? fn.arguments : isJsonObject(fn.arguments) ? JSON.stringify(fn.arguments) : '';
      output.push(functionCallItem(`fc_${suffix}_${index}`, 'completed', responsesCallId(call.id, `${responseId}:${index}`), name, args, namespaces.get(name)));
    });
  }
  const end = endOf(choice.finish_reason);
  const created = typeof completion.created === 'number' ? completion.created : Math.floor(Date.now() / 1000);
  return responseObject(body, responseId, created, end.status, output, {
    incomplete_details: end.incomplete_details,
    completed_at: Math.floor(Date.now() / 1000),
    ...(usage ? { usage: usage.openai } : {}),
  });
}
