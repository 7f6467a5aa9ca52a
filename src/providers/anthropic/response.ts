// Anthropic Message → chat.completion. Thinking travels as `reasoning_content` (text) plus the gateway's
// `thinking_blocks` extension (text with its signature, or redacted data) so a client that sends the
// assistant message back keeps multi-turn tool use with extended thinking working.
import { isJsonObject, type JsonObject } from '../../json-object.js';
import { malformed, UpstreamFailureError, type ParsedResponse, type UpstreamTarget } from '../types.js';
import { readAnthropicErrorObject, statusForErrorType } from './errors.js';
import { JSON_RESPONSE_TOOL } from './tools.js';
import { mergeUsageCounts, noteServedModel, reportAnthropicUsage, type AnthropicUsageCounts } from './usage.js';

/**
 * The convention's finish_reason for a stop_reason. `tool_use` is 'tool_calls' only when the client can
 * see a tool call: a reply whose only tool call was the JSON-mode answer finished normally.
 */
export function mapStopReason(reason: unknown, calledClientTools: boolean): string {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return calledClientTools ? 'tool_calls' : 'stop';
    case 'refusal':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, pause_turn, and whatever Anthropic adds next.
      return calledClientTools ? 'tool_calls' : 'stop';
  }
}

export function thinkingBlock(thinking: string, signature: unknown): JsonObject {
  return { type: 'thinking', thinking, signature: typeof signature === 'string' ? signature : '' };
}

interface MessageParts {
  text: string[];
  reasoning: string[];
  thinkingBlocks: JsonObject[];
  toolCalls: JsonObject[];
  json: string | undefined;
}

function readContent(content: unknown[]): MessageParts {
  const parts: MessageParts = { text: [], reasoning: [], thinkingBlocks: [], toolCalls: [], json: undefined };
  for (const block of content) {
    if (!isJsonObject(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') {
      parts.text.push(block.text);
    } else if (block.type === 'thinking' && typeof block.thinking === 'string') {
      parts.reasoning.push(block.thinking);
      parts.thinkingBlocks.push(thinkingBlock(block.thinking, block.signature));
    } else if (block.type === 'redacted_thinking' && typeof block.data === 'string') {
      parts.thinkingBlocks.push({ type: 'redacted_thinking', data: block.data });
    } else if (block.type === 'tool_use') {
      const args = JSON.stringify(isJsonObject(block.input) ? block.input : {});
      if (block.name === JSON_RESPONSE_TOOL) parts.json = args;
      else parts.toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: args } });
    }
    // Server-tool blocks (server_tool_use, web_search_tool_result, ...) have no place in the convention.
  }
  return parts;
}

export function parseAnthropicChatResponse(json: unknown, target: UpstreamTarget): ParsedResponse {
  if (!isJsonObject(json)) throw malformed('message');
  if (json.type === 'error' && isJsonObject(json.error)) {
    throw new UpstreamFailureError(readAnthropicErrorObject(json.error, statusForErrorType(json.error.type)));
  }
  if (!Array.isArray(json.content)) throw malformed('message');
  const parts = readContent(json.content);
  // JSON mode: the answer is the tool's input, alone (text the model wrote around the call is not JSON).
  const content = parts.json ?? (parts.text.length > 0 ? parts.text.join('') : parts.toolCalls.length > 0 ? null : '');
  const message: JsonObject = { role: 'assistant', content, refusal: null };
  if (parts.reasoning.length > 0) message.reasoning_content = parts.reasoning.join('');
  if (parts.thinkingBlocks.length > 0) message.thinking_blocks = parts.thinkingBlocks;
  if (parts.toolCalls.length > 0) message.tool_calls = parts.toolCalls;

  const counts: AnthropicUsageCounts = {};
  mergeUsageCounts(counts, json.usage);
  noteServedModel(counts, json.model);
  const usage = reportAnthropicUsage(counts, parts.reasoning.join(''));
  const body: JsonObject = {
    id: typeof json.id === 'string' ? json.id : '',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: target.clientModel,
    choices: [{ index: 0, message, logprobs: null, finish_reason: mapStopReason(json.stop_reason, parts.toolCalls.length > 0) }],
  };
  if (usage) body.usage = usage.openai;
  return { body, usage };
}
