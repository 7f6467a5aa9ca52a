// A Messages request → the gateway's canonical chat completions request (the body a chat client would have
// sent), which the candidate's own chat adapter then writes for its upstream (path, Azure's deployment URL,
// stream_options.include_usage). What is carried and what is lost: docs/adr/0043-messages-to-chat.md.
import { createHash } from 'node:crypto';
import { GatewayError } from '../../../errors.js';
import { isJsonObject, type JsonObject } from '../../../json-object.js';
import type { ChatTranslation } from '../../../providers/kinds.js';
import type { ChatRequestBody } from '../../../providers/types.js';
import type { MessagesRequestBody } from '../validate.js';
import { chatMessages } from './messages.js';
import { reasoningEffort } from './reasoning.js';
import { chatTools } from './tools.js';

/** Fields that ask Anthropic to run something on its side (allowed by `allow_server_tools`): no chat upstream can. */
const SERVER_SIDE = ['mcp_servers', 'container'];

/** Top-level Messages fields the translation reads; any other is dropped (and listed). */
const CARRIED = new Set(['model', 'messages', 'max_tokens', 'system', 'metadata', 'stop_sequences', 'stream', 'temperature', 'top_p', 'tools', 'tool_choice', 'thinking', 'output_config']);

export interface ChatRequest {
  readonly body: ChatRequestBody;
  /** What had no place in chat completions, by field (logged at debug as a translation's drops are). */
  readonly dropped: readonly string[];
}

/** `output_config.format` (structured outputs) as chat's response_format. */
function responseFormat(outputConfig: unknown): JsonObject | undefined {
  const format = isJsonObject(outputConfig) ? outputConfig.format : undefined;
  if (!isJsonObject(format) || format.type !== 'json_schema' || !isJsonObject(format.schema)) return undefined;
  return { type: 'json_schema', json_schema: { name: 'response', schema: format.schema } };
}

/** The end user, never as sent: a SHA-256 of Claude Code's `metadata.user_id` (it names the device and session). */
function hashedUser(metadata: unknown): string | undefined {
  const id = isJsonObject(metadata) ? metadata.user_id : undefined;
  return typeof id === 'string' && id !== '' ? createHash('sha256').update(id).digest('hex') : undefined;
}

/**
 * `maxOutputTokens`: the model's, which bounds the hold too — a client's max_tokens above it (Claude Code
 * sends 32,000) would be refused by an upstream whose limit the operator configured.
 */
export function chatRequestOf(body: MessagesRequestBody, translation: ChatTranslation, maxOutputTokens: number | undefined): ChatRequest {
  for (const field of SERVER_SIDE) {
    if (body[field] === undefined || body[field] === null) continue;
    throw new GatewayError('invalid_request', { param: field, message: `'${field}' runs on Anthropic's servers; this model's upstream speaks chat completions and cannot run it.` });
  }
  const dropped = new Set<string>();
  for (const field of Object.keys(body)) if (!CARRIED.has(field)) dropped.add(field);
  const chat: ChatRequestBody = { model: body.model, messages: chatMessages(body.system, body.messages, dropped) };
  Object.assign(chat, chatTools(body.tools, body.tool_choice, dropped));
  chat[translation.outputLimit] = Math.min(body.max_tokens, maxOutputTokens ?? body.max_tokens);
  if (typeof body.temperature === 'number') chat.temperature = body.temperature;
  if (typeof body.top_p === 'number') chat.top_p = body.top_p;
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length > 0) chat.stop = body.stop_sequences;
  const effort = reasoningEffort(body.thinking, body.output_config, dropped);
  if (effort) chat.reasoning_effort = effort;
  const format = responseFormat(body.output_config);
  if (format) chat.response_format = format;
  const user = hashedUser(body.metadata);
  if (user) chat.user = user;
  if (body.stream === true) chat.stream = true;
  return { body: chat, dropped: [...dropped] };
}
