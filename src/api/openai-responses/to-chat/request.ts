// A Responses request → the gateway's canonical chat completions request (the body a chat client would
// have sent), which the candidate's own chat adapter then writes for its upstream (its path, Azure's
// deployment URL, stream_options.include_usage). What is carried and what is lost:
// docs/adr/0044-responses-to-chat.md.
import { createHash } from 'node:crypto';
import { GatewayError } from '../../../errors.js';
import { isJsonObject, type JsonObject } from '../../../json-object.js';
import type { ChatTranslation } from '../../../providers/kinds.js';
import type { ChatRequestBody } from '../../../providers/types.js';
import type { ResponsesBody } from '../validate.js';
import { chatMessages } from './input.js';
import { chatTools } from './tools.js';

/** Top-level fields the translation reads. */
const CARRIED = new Set(['model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'max_output_tokens', 'temperature', 'top_p', 'reasoning', 'text', 'user', 'stream']);
/** Fields that change nothing a chat upstream could do: ignored, not listed as dropped. */
const IGNORED = new Set(['store', 'include', 'client_metadata', 'stream_options']);
/** Fields naming state an upstream stores, which no chat upstream has (§14: send the full history). */
const STATEFUL = ['previous_response_id', 'conversation', 'prompt'] as const;

export interface ChatRequest {
  readonly body: ChatRequestBody;
  /** What had no place in chat completions (logged at debug, as a translation's drops are). */
  readonly dropped: readonly string[];
  /** The namespace of each function flattened out of one (an answer's calls carry it back). */
  readonly namespaces: ReadonlyMap<string, string>;
}

/** The 400 a translated cell answers to stored state: the client is to send the whole history. */
export function statefulRefusal(param: string): GatewayError {
  return new GatewayError('unsupported_parameter', {
    param,
    message: `'${param}' names state stored upstream, and this model's upstream serves only chat completions, which store none: send the full history as 'input' with store: false (as Codex does).`,
  });
}

/** `text.format` (structured outputs) as chat's response_format. */
function responseFormat(text: unknown): JsonObject | undefined {
  const format = isJsonObject(text) ? text.format : undefined;
  if (!isJsonObject(format)) return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type !== 'json_schema' || !isJsonObject(format.schema)) return undefined;
  const schema: JsonObject = { name: typeof format.name === 'string' ? format.name : 'response', schema: format.schema };
  if (typeof format.strict === 'boolean') schema.strict = format.strict;
  if (typeof format.description === 'string') schema.description = format.description;
  return { type: 'json_schema', json_schema: schema };
}

/**
 * `maxOutputTokens`: the model's, which bounds the hold too (Codex sends no max_output_tokens: the model's
 * goes upstream, so the upstream never writes more than was held).
 */
export function chatRequestOf(body: ResponsesBody, translation: ChatTranslation, maxOutputTokens: number | undefined): ChatRequest {
  for (const field of STATEFUL) if (body[field] !== undefined && body[field] !== null) throw statefulRefusal(field);
  if (Array.isArray(body.input)) {
    const index = body.input.findIndex((item) => isJsonObject(item) && item.type === 'item_reference');
    if (index >= 0) throw statefulRefusal(`input[${index}]`);
  }
  const dropped = new Set<string>();
  for (const field of Object.keys(body)) if (!CARRIED.has(field) && !IGNORED.has(field)) dropped.add(field);
  const chat: ChatRequestBody = { model: body.model, messages: chatMessages(body.instructions, body.input) };
  const { namespaces, ...tools } = chatTools(body, dropped);
  Object.assign(chat, tools);
  const limit = typeof body.max_output_tokens === 'number' ? body.max_output_tokens : maxOutputTokens;
  if (limit !== undefined) chat[translation.outputLimit] = Math.min(limit, maxOutputTokens ?? limit);
  if (typeof body.temperature === 'number') chat.temperature = body.temperature;
  if (typeof body.top_p === 'number') chat.top_p = body.top_p;
  const reasoning = isJsonObject(body.reasoning) ? body.reasoning : {};
  if (typeof reasoning.effort === 'string') chat.reasoning_effort = reasoning.effort;
  const format = responseFormat(body.text);
  if (format) chat.response_format = format;
  if (isJsonObject(body.text) && body.text.verbosity !== undefined) dropped.add('text.verbosity');
  // The end user, never as sent.
  if (typeof body.user === 'string' && body.user !== '') chat.user = createHash('sha256').update(body.user).digest('hex');
  if (body.stream === true) chat.stream = true;
  return { body: chat, dropped: [...dropped], namespaces };
}
