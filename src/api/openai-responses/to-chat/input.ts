// Responses input items → chat completions messages (docs/adr/0044-responses-to-chat.md):
//  - `instructions` and every system / developer item: ONE system message at the front, in order (many
//    compatible servers' chat templates refuse a system message anywhere else; Codex sends its developer
//    items first, and may add one mid-session);
//  - message items: user / assistant messages; input_text / output_text parts as text, input_image as an
//    image_url part, a refusal as assistant text;
//  - function_call items: an assistant message's tool_calls (consecutive calls, and the assistant text just
//    before them, make one message), call ids mapped (call-ids.ts);
//  - function_call_output: a `tool` message; images in an output follow the tool messages as a user message
//    (chat's tool messages carry text only);
//  - reasoning items: dropped — a chat upstream takes no reasoning back (the gateway's own reasoning
//    items, made from `reasoning_content`, come back here and go no further);
//  - an item_reference names state no chat upstream has: refused before this (bind.ts); any other item
//    type (a shell call, a computer action, a custom tool call) is a 400 naming it.
import { GatewayError } from '../../../errors.js';
import { isJsonObject, type JsonObject } from '../../../json-object.js';
import { chatCallId } from './call-ids.js';

type ChatPart = JsonObject;

function unsupported(param: string, what: string): never {
  throw new GatewayError('unsupported_parameter', {
    param,
    message: `${what} cannot be sent to this model: its upstream serves only chat completions.`,
  });
}

/** One content part as a chat part (text or image); undefined for a part that carries nothing. */
function chatPart(part: unknown, param: string): ChatPart | undefined {
  if (typeof part === 'string') return { type: 'text', text: part };
  if (!isJsonObject(part)) return undefined;
  switch (part.type) {
    case 'input_text':
    case 'output_text':
    case 'text':
    case 'summary_text':
      return typeof part.text === 'string' ? { type: 'text', text: part.text } : undefined;
    case 'refusal':
      return typeof part.refusal === 'string' ? { type: 'text', text: part.refusal } : undefined;
    case 'input_image': {
      const url = typeof part.image_url === 'string' ? part.image_url : undefined;
      if (url === undefined) return unsupported(`${param}.file_id`, 'An image given by file_id');
      return { type: 'image_url', image_url: { url, ...(typeof part.detail === 'string' && part.detail !== 'auto' ? { detail: part.detail } : {}) } };
    }
    default:
      return unsupported(`${param}.type`, `A content part of type '${String(part.type)}'`);
  }
}

function partsOf(content: unknown, param: string): ChatPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const parts: ChatPart[] = [];
  content.forEach((part, index) => {
    const chat = chatPart(part, `${param}[${index}]`);
    if (chat) parts.push(chat);
  });
  return parts;
}

function textOf(parts: readonly ChatPart[]): string {
  return parts.map((part) => (typeof part.text === 'string' ? part.text : '')).join('');
}

/** A message's content: plain text when it is text only (what every chat server takes), else parts. */
function contentOf(parts: readonly ChatPart[]): string | ChatPart[] {
  return parts.every((part) => part.type === 'text') ? textOf(parts) : [...parts];
}

export function chatMessages(instructions: unknown, input: unknown): JsonObject[] {
  const system: string[] = [];
  if (typeof instructions === 'string' && instructions !== '') system.push(instructions);
  const messages: JsonObject[] = [];
  /** Images from tool outputs, sent as a user message once the run of tool messages ends. */
  let images: ChatPart[] = [];
  const flushImages = () => {
    if (images.length > 0) messages.push({ role: 'user', content: images });
    images = [];
  };
  const items = typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : Array.isArray(input) ? input : [];
  items.forEach((item: unknown, index) => {
    const param = `input[${index}]`;
    if (!isJsonObject(item)) return;
    const type = item.type ?? 'message';
    if (type !== 'function_call_output') flushImages();
    switch (type) {
      case 'message': {
        const parts = partsOf(item.content, `${param}.content`);
        if (item.role === 'system' || item.role === 'developer') {
          const text = textOf(parts);
          if (text !== '') system.push(text);
          return;
        }
        if (item.role === 'assistant') {
          messages.push({ role: 'assistant', content: textOf(parts) });
          return;
        }
        messages.push({ role: 'user', content: contentOf(parts) });
        return;
      }
      case 'function_call': {
        const call = {
          id: chatCallId(typeof item.call_id === 'string' ? item.call_id : ''),
          type: 'function',
          function: { name: typeof item.name === 'string' ? item.name : '', arguments: typeof item.arguments === 'string' ? item.arguments : '{}' },
        };
        const last = messages.at(-1);
        // The assistant's text and its calls, or calls made together, are one chat message.
        if (last?.role === 'assistant') {
          const calls = Array.isArray(last.tool_calls) ? last.tool_calls : (last.tool_calls = []);
          calls.push(call);
          if (last.content === '') last.content = null;
        } else {
          messages.push({ role: 'assistant', content: null, tool_calls: [call] });
        }
        return;
      }
      case 'function_call_output': {
        const parts = partsOf(item.output, `${param}.output`);
        images.push(...parts.filter((part) => part.type === 'image_url'));
        messages.push({ role: 'tool', tool_call_id: chatCallId(typeof item.call_id === 'string' ? item.call_id : ''), content: textOf(parts) });
        return;
      }
      case 'reasoning':
        return;
      default:
        return unsupported(`${param}.type`, `An input item of type '${String(type)}'`);
    }
  });
  flushImages();
  return system.length > 0 ? [{ role: 'system', content: system.join('\n\n') }, ...messages] : messages;
}
