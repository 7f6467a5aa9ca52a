// OpenAI `messages` → Gemini `contents` (user/model turns) and `systemInstruction`.
import { GatewayError } from '../../errors.js';
import { isJsonObject, type JsonObject } from '../../json-object.js';
import { contentText } from '../content-text.js';
import { parseDataUrl } from '../data-url.js';
import { parseToolArguments } from '../tool-arguments.js';
import { thoughtSignatureOf } from './tool-calls.js';

export interface GeminiContents {
  readonly contents: JsonObject[];
  readonly systemInstruction: JsonObject | undefined;
}

// Gemini needs a MIME type for a URL it fetches itself; the extension is all a URL tells us.
const TYPES_BY_EXTENSION: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
};

export function guessMimeType(url: string): string {
  const path = url.split(/[?#]/, 1)[0] ?? '';
  const extension = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase();
  return (extension !== undefined ? TYPES_BY_EXTENSION[extension] : undefined) ?? 'image/jpeg';
}

function urlPart(url: unknown): JsonObject | undefined {
  if (typeof url !== 'string') return undefined;
  const inline = parseDataUrl(url);
  if (inline) return { inlineData: { mimeType: inline.mediaType, data: inline.data } };
  if (/^https?:\/\//i.test(url)) return { fileData: { mimeType: guessMimeType(url), fileUri: url } };
  return undefined;
}

/** One convention content part → a Gemini part; null for empty text; undefined when Gemini has no place for it. */
function toPart(part: unknown): JsonObject | null | undefined {
  if (!isJsonObject(part)) return undefined;
  switch (part.type) {
    case 'text':
    case 'refusal': {
      const text = part.type === 'text' ? part.text : part.refusal;
      if (typeof text !== 'string') return undefined;
      return text === '' ? null : { text };
    }
    case 'image_url':
      return urlPart(isJsonObject(part.image_url) ? part.image_url.url : part.image_url);
    case 'file': {
      const data = isJsonObject(part.file) ? part.file.file_data : undefined;
      return typeof data === 'string' && data.startsWith('data:') ? urlPart(data) : undefined;
    }
    case 'input_audio': {
      const audio = isJsonObject(part.input_audio) ? part.input_audio : {};
      if (typeof audio.data !== 'string' || typeof audio.format !== 'string') return undefined;
      return { inlineData: { mimeType: `audio/${audio.format}`, data: audio.data } };
    }
    default:
      return undefined;
  }
}

function contentParts(content: unknown, path: string, dropped: string[], textOnly = false): JsonObject[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (!Array.isArray(content)) return [];
  const parts: JsonObject[] = [];
  content.forEach((item, j) => {
    const part = toPart(item);
    if (part === null) return;
    if (part === undefined || (textOnly && part.text === undefined)) dropped.push(`${path}.content[${j}]`);
    else parts.push(part);
  });
  return parts;
}

function toolCallParts(message: JsonObject, i: number, toolNames: Map<string, string>, dropped: string[]): JsonObject[] {
  if (!Array.isArray(message.tool_calls)) return [];
  const parts: JsonObject[] = [];
  message.tool_calls.forEach((call: unknown, j) => {
    const path = `messages[${i}].tool_calls[${j}]`;
    const fn = isJsonObject(call) && isJsonObject(call.function) ? call.function : undefined;
    if (!isJsonObject(call) || (call.type !== undefined && call.type !== 'function') || !fn) {
      dropped.push(path);
      return;
    }
    if (typeof fn.name !== 'string' || fn.name === '') {
      throw new GatewayError('invalid_request', { message: `Missing '${path}.function.name'.`, param: `${path}.function.name` });
    }
    if (typeof call.id === 'string') toolNames.set(call.id, fn.name);
    const part: JsonObject = { functionCall: { name: fn.name, args: parseToolArguments(fn.arguments, `${path}.function.arguments`) } };
    // Gemini 3 refuses a replayed function call without the signature it was issued with.
    const signature = thoughtSignatureOf(call);
    if (signature !== undefined) part.thoughtSignature = signature;
    parts.push(part);
  });
  return parts;
}

/** A tool result: a JSON object is passed as the response itself, anything else is wrapped. */
function functionResponsePart(name: string, content: unknown): JsonObject {
  const text = contentText(content);
  let response: JsonObject = { content: text };
  try {
    const parsed: unknown = JSON.parse(text);
    if (isJsonObject(parsed)) response = parsed;
  } catch {
    // plain text stays wrapped
  }
  return { functionResponse: { name, response } };
}

function toolName(message: JsonObject, i: number, toolNames: ReadonlyMap<string, string>): string {
  if (message.role === 'function') {
    if (typeof message.name === 'string' && message.name !== '') return message.name;
    throw new GatewayError('invalid_request', { message: `Missing 'messages[${i}].name'.`, param: `messages[${i}].name` });
  }
  // Gemini matches results to calls by function name; the convention by id, so the id is looked up.
  const name = typeof message.tool_call_id === 'string' ? toolNames.get(message.tool_call_id) : undefined;
  if (name !== undefined) return name;
  throw new GatewayError('invalid_request', {
    message: `Invalid 'messages[${i}].tool_call_id': no earlier assistant tool call has this id.`,
    param: `messages[${i}].tool_call_id`,
  });
}

/** Consecutive turns of one role become one turn: Gemini expects user and model to alternate. */
function append(contents: JsonObject[], role: 'user' | 'model', parts: JsonObject[]): void {
  if (parts.length === 0) return;
  const last = contents.at(-1);
  if (last && last.role === role && Array.isArray(last.parts)) last.parts.push(...parts);
  else contents.push({ role, parts });
}

/** Throws GatewayError('invalid_request') for a conversation Gemini's API cannot express. */
export function toGeminiContents(messages: readonly JsonObject[], dropped: string[]): GeminiContents {
  const system: JsonObject[] = [];
  const contents: JsonObject[] = [];
  const toolNames = new Map<string, string>();
  messages.forEach((message, i) => {
    const path = `messages[${i}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        // Gemini has one system instruction; system messages anywhere in the conversation go there, in order.
        system.push(...contentParts(message.content, path, dropped, true));
        return;
      case 'user':
        append(contents, 'user', contentParts(message.content, path, dropped));
        return;
      case 'assistant':
        append(contents, 'model', [...contentParts(message.content, path, dropped), ...toolCallParts(message, i, toolNames, dropped)]);
        return;
      case 'tool':
      case 'function':
        append(contents, 'user', [functionResponsePart(toolName(message, i, toolNames), message.content)]);
        return;
      default:
        throw new GatewayError('invalid_request', {
          message: `Invalid '${path}.role': ${JSON.stringify(message.role)} is not a chat role.`,
          param: `${path}.role`,
        });
    }
  });
  return { contents, systemInstruction: system.length > 0 ? { parts: system } : undefined };
}
