// OpenAI conversation → Anthropic's: system and developer text hoisted to `system`, tool results as
// tool_result blocks of a user turn, and turns that strictly alternate (same-role neighbours merged).
import { isJsonObject, type JsonObject } from '../../json-object.js';
import { parseDataUrl } from '../data-url.js';
import { parseToolArguments } from '../tool-arguments.js';

export interface ConvertedConversation {
  readonly system: JsonObject[];
  readonly messages: JsonObject[];
}

/** Keeps a client's prompt-caching marker (an Anthropic field some clients put on OpenAI parts). */
function withCacheControl(block: JsonObject, part: JsonObject): JsonObject {
  return part.cache_control === undefined ? block : { ...block, cache_control: part.cache_control };
}

function imageBlock(part: JsonObject): JsonObject | undefined {
  const image = part.image_url;
  const url = typeof image === 'string' ? image : isJsonObject(image) && typeof image.url === 'string' ? image.url : '';
  const inline = parseDataUrl(url);
  if (inline) return { type: 'image', source: { type: 'base64', media_type: inline.mediaType, data: inline.data } };
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  return undefined;
}

/** A PDF, inline: a data URL, or bare base64 named *.pdf. Other files have no Anthropic block. */
function documentBlock(part: JsonObject): JsonObject | undefined {
  const file = isJsonObject(part.file) ? part.file : {};
  if (typeof file.file_data !== 'string') return undefined;
  const filename = typeof file.filename === 'string' ? file.filename : undefined;
  const inline = parseDataUrl(file.file_data);
  const isPdf = inline ? inline.mediaType === 'application/pdf' : /\.pdf$/i.test(filename ?? '');
  if (!isPdf) return undefined;
  const source = { type: 'base64', media_type: 'application/pdf', data: inline ? inline.data : file.file_data };
  return { type: 'document', source, ...(filename ? { title: filename } : {}) };
}

function partBlock(part: JsonObject): JsonObject | undefined {
  if (part.type === 'text') return typeof part.text === 'string' && part.text !== '' ? { type: 'text', text: part.text } : undefined;
  if (part.type === 'image_url') return imageBlock(part);
  if (part.type === 'file') return documentBlock(part);
  return undefined;
}

/** Content (a string or parts) → blocks; parts without an Anthropic block are listed in `dropped`.
 * Empty text is skipped: Anthropic rejects empty text blocks. */
function contentBlocks(content: unknown, dropped: Set<string>, textOnly = false): JsonObject[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const blocks: JsonObject[] = [];
  for (const part of content) {
    if (!isJsonObject(part)) continue;
    const block = textOnly && part.type !== 'text' ? undefined : partBlock(part);
    if (block) blocks.push(withCacheControl(block, part));
    else if (part.type !== 'text') dropped.add(`messages[].content[].${typeof part.type === 'string' ? part.type : 'unknown'}`);
  }
  return blocks;
}

/** The gateway's own `thinking_blocks` extension, echoed back so Anthropic can verify its signatures. */
function thinkingBlocks(value: unknown): JsonObject[] {
  if (!Array.isArray(value)) return [];
  const blocks: JsonObject[] = [];
  for (const block of value) {
    if (!isJsonObject(block)) continue;
    if (block.type === 'thinking' && typeof block.thinking === 'string') {
      blocks.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
    } else if (block.type === 'redacted_thinking' && typeof block.data === 'string') {
      blocks.push({ type: 'redacted_thinking', data: block.data });
    }
  }
  return blocks;
}

function toolUseBlocks(calls: unknown, messageIndex: number, dropped: Set<string>): JsonObject[] {
  if (!Array.isArray(calls)) return [];
  return calls.flatMap((call: unknown, j) => {
    if (!isJsonObject(call) || !isJsonObject(call.function)) {
      dropped.add('messages[].tool_calls[].custom');
      return [];
    }
    const param = `messages[${messageIndex}].tool_calls[${j}].function.arguments`;
    return [{ type: 'tool_use', id: call.id, name: call.function.name, input: parseToolArguments(call.function.arguments, param) }];
  });
}

function toolResultBlock(message: JsonObject, dropped: Set<string>): JsonObject {
  const block: JsonObject = { type: 'tool_result', tool_use_id: message.tool_call_id };
  if (typeof message.content === 'string') {
    if (message.content !== '') block.content = message.content;
  } else {
    const blocks = contentBlocks(message.content, dropped);
    if (blocks.length > 0) block.content = blocks;
  }
  return block;
}

function pushTurn(turns: JsonObject[], role: 'user' | 'assistant', blocks: JsonObject[]): void {
  if (blocks.length === 0) return;
  const last = turns.at(-1);
  if (last?.role === role && Array.isArray(last.content)) last.content.push(...blocks);
  else turns.push({ role, content: blocks });
}

/** Anthropic wants a user turn's tool_result blocks before anything else in it. */
function toolResultsFirst(turn: JsonObject): void {
  if (turn.role !== 'user' || !Array.isArray(turn.content)) return;
  const blocks = turn.content as JsonObject[];
  turn.content = [...blocks.filter((b) => b.type === 'tool_result'), ...blocks.filter((b) => b.type !== 'tool_result')];
}

/** Throws GatewayError('invalid_request') for tool-call arguments that are not a JSON object. */
export function convertConversation(messages: readonly JsonObject[], dropped: Set<string>): ConvertedConversation {
  const system: JsonObject[] = [];
  const turns: JsonObject[] = [];
  messages.forEach((message, i) => {
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...contentBlocks(message.content, dropped, true));
        break;
      case 'user':
        pushTurn(turns, 'user', contentBlocks(message.content, dropped));
        break;
      case 'assistant':
        if (message.function_call !== undefined && message.function_call !== null) dropped.add('messages[].function_call');
        pushTurn(turns, 'assistant', [
          ...thinkingBlocks(message.thinking_blocks),
          ...contentBlocks(message.content, dropped),
          ...toolUseBlocks(message.tool_calls, i, dropped),
        ]);
        break;
      case 'tool':
        pushTurn(turns, 'user', [toolResultBlock(message, dropped)]);
        break;
      default:
        // `function` (the deprecated functions API) and unknown roles have no Anthropic counterpart.
        dropped.add(`messages[].role=${String(message.role)}`);
    }
  });
  for (const turn of turns) toolResultsFirst(turn);
  return { system, messages: turns };
}
