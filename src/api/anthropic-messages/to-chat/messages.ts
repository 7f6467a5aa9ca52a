// A Messages conversation → chat completions messages. `system` (a string or text blocks) becomes one
// system message. A user turn's tool_result blocks become `tool` messages — first, as chat requires them
// right after the assistant's tool calls — and the rest of the turn one user message (with any image a
// tool returned: a tool message carries text only). An assistant turn's text and tool_use blocks become
// one assistant message with `tool_calls`; its thinking is dropped (thinking.ts says why). A `system`
// message inside `messages` (Claude Code sends its reminders so to models it does not know) stays a
// system message at its place — chat takes one anywhere — except between tool calls and their results,
// which chat requires adjacent: there it follows the results.
import { GatewayError } from '../../../errors.js';
import { isJsonObject, type JsonObject } from '../../../json-object.js';
import { partsContent, toolResultContent, userPart } from './content.js';
import { chatToolCallId } from './tool-ids.js';

/** The text of `system`: a string, or its text blocks one per line. */
export function systemText(system: unknown, dropped: Set<string>): string | undefined {
  if (typeof system === 'string') return system === '' ? undefined : system;
  if (!Array.isArray(system)) return undefined;
  const texts: string[] = [];
  for (const block of system) {
    if (!isJsonObject(block)) continue;
    if (block.cache_control !== undefined) dropped.add('cache_control');
    if (block.type === 'text' && typeof block.text === 'string' && block.text !== '') texts.push(block.text);
  }
  return texts.length > 0 ? texts.join('\n') : undefined;
}

/** The tool message of a tool_result; an error says so, as chat has no flag for it. */
function toolMessage(block: JsonObject, text: string): JsonObject {
  const id = typeof block.tool_use_id === 'string' ? block.tool_use_id : '';
  return { role: 'tool', tool_call_id: chatToolCallId(id), content: block.is_error === true ? `Error: ${text}` : text };
}

function userMessages(content: unknown, index: number, dropped: Set<string>): JsonObject[] {
  const param = `messages[${index}].content`;
  if (typeof content === 'string') return [{ role: 'user', content }];
  if (!Array.isArray(content)) return [];
  const tools: JsonObject[] = [];
  const parts: JsonObject[] = [];
  for (const block of content) {
    if (isJsonObject(block) && block.cache_control !== undefined) dropped.add('cache_control');
    if (isJsonObject(block) && block.type === 'tool_result') {
      const result = toolResultContent(block.content, param, dropped);
      tools.push(toolMessage(block, result.text));
      parts.push(...result.media);
      continue;
    }
    const part = userPart(block, param, dropped);
    if (part) parts.push(part);
  }
  return parts.length > 0 ? [...tools, { role: 'user', content: partsContent(parts) }] : tools;
}

/** Arguments as chat carries them: the input's JSON text. */
function argumentsOf(input: unknown): string {
  return JSON.stringify(isJsonObject(input) ? input : {});
}

function assistantMessage(content: unknown, dropped: Set<string>): JsonObject | undefined {
  if (typeof content === 'string') return content === '' ? undefined : { role: 'assistant', content };
  if (!Array.isArray(content)) return undefined;
  const texts: string[] = [];
  const calls: JsonObject[] = [];
  for (const block of content) {
    if (!isJsonObject(block)) continue;
    if (block.cache_control !== undefined) dropped.add('cache_control');
    if (block.type === 'text' && typeof block.text === 'string') {
      if (block.text !== '') texts.push(block.text);
    } else if (block.type === 'tool_use') {
      const id = typeof block.id === 'string' ? block.id : '';
      const name = typeof block.name === 'string' ? block.name : '';
      calls.push({ id: chatToolCallId(id), type: 'function', function: { name, arguments: argumentsOf(block.input) } });
    } else {
      // Thinking (thinking.ts says why), and what a native cell's upstream ran on its side (server_tool_use, …).
      dropped.add(`messages[].content[].${String(block.type)}`);
    }
  }
  if (texts.length === 0 && calls.length === 0) return undefined;
  const message: JsonObject = { role: 'assistant', content: texts.length > 0 ? texts.join('\n') : null };
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

/** Splices system messages in after the tool messages a user turn opens with (chat wants those first). */
function afterToolResults(turn: JsonObject[], pending: JsonObject[]): JsonObject[] {
  const tools = turn.findIndex((message) => message.role !== 'tool');
  const at = tools < 0 ? turn.length : tools;
  return [...turn.slice(0, at), ...pending, ...turn.slice(at)];
}

const callsTools = (message: JsonObject | undefined): boolean => message?.role === 'assistant' && Array.isArray(message.tool_calls);

/** The chat messages of a Messages request: its system text, then each turn. */
export function chatMessages(system: unknown, messages: readonly JsonObject[], dropped: Set<string>): JsonObject[] {
  const out: JsonObject[] = [];
  const instructions = systemText(system, dropped);
  if (instructions !== undefined) out.push({ role: 'system', content: instructions });
  let pending: JsonObject[] = [];
  messages.forEach((message, index) => {
    if (message.role === 'user') {
      out.push(...afterToolResults(userMessages(message.content, index, dropped), pending));
      pending = [];
    } else if (message.role === 'assistant') {
      const turn = assistantMessage(message.content, dropped);
      if (turn) out.push(turn);
    } else if (message.role === 'system') {
      const text = systemText(message.content, dropped);
      if (text === undefined) return;
      if (callsTools(out.at(-1)) || pending.length > 0) pending.push({ role: 'system', content: text });
      else out.push({ role: 'system', content: text });
    } else {
      throw new GatewayError('invalid_request', { param: `messages[${index}].role`, message: `Invalid 'messages[${index}].role': expected 'user', 'assistant' or 'system'.` });
    }
  });
  out.push(...pending);
  // A conversation whose every turn carried nothing chat can take still asks something.
  if (!out.some((message) => message.role !== 'system')) out.push({ role: 'user', content: '' });
  return out;
}
