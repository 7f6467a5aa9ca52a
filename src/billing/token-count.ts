// Token estimates for holds and for settling without upstream usage, with the o200k_base BPE
// (gpt-tokenizer). Holds are estimates by contract; exact charges always come from upstream usage.
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';

/** Per-message framing the chat format adds (role markers), as OpenAI documents it. */
const TOKENS_PER_MESSAGE = 3;
/** The assistant reply is primed with a few tokens. */
const TOKENS_REPLY_PRIMING = 3;
/** An image part, without decoding it: OpenAI's cost of one 1024×1024 high-detail tile set. */
export const IMAGE_PART_TOKENS = 765;
/** Above this many characters a blob (audio, file data) is estimated at 4 characters per token. */
const BLOB_CHARS = 8_192;

export function countText(text: string): number {
  return text.length === 0 ? 0 : countTokens(text);
}

function countJson(value: unknown): number {
  if (value === undefined || value === null) return 0;
  const text = JSON.stringify(value);
  return text.length > BLOB_CHARS ? Math.ceil(text.length / 4) : countText(text);
}

function countContentPart(part: unknown): number {
  if (typeof part === 'string') return countText(part);
  if (typeof part !== 'object' || part === null) return 0;
  const p = part as Record<string, unknown>;
  if (typeof p.text === 'string') return countText(p.text);
  if (p.type === 'image_url' || p.type === 'image' || p.image_url !== undefined) return IMAGE_PART_TOKENS;
  return countJson(part);
}

function countContent(content: unknown): number {
  if (typeof content === 'string') return countText(content);
  if (Array.isArray(content)) {
    let total = 0;
    for (const part of content) total += countContentPart(part);
    return total;
  }
  return content === undefined || content === null ? 0 : countJson(content);
}

function countMessage(message: Record<string, unknown>): number {
  let total = TOKENS_PER_MESSAGE;
  if (typeof message.role === 'string') total += countText(message.role);
  total += countContent(message.content);
  if (typeof message.name === 'string') total += countText(message.name) + 1;
  if (message.tool_calls !== undefined) total += countJson(message.tool_calls);
  if (message.function_call !== undefined) total += countJson(message.function_call);
  if (typeof message.tool_call_id === 'string') total += countText(message.tool_call_id);
  return total;
}

/**
 * Input estimate of a chat request: every message, plus tool and function definitions and a JSON
 * schema response format (all of which the model reads as input).
 */
export function countChatInput(body: {
  messages: ReadonlyArray<Record<string, unknown>>;
  tools?: unknown;
  functions?: unknown;
  response_format?: unknown;
}): number {
  let total = TOKENS_REPLY_PRIMING;
  for (const message of body.messages) total += countMessage(message);
  total += countJson(body.tools);
  total += countJson(body.functions);
  const format = body.response_format as { type?: unknown; json_schema?: unknown } | undefined | null;
  if (format && format.type === 'json_schema') total += countJson(format.json_schema);
  return total;
}

/** Embedding input: a string, strings, or token arrays (counted by their length). */
export function countEmbeddingInput(input: unknown): number {
  if (typeof input === 'string') return countText(input);
  if (!Array.isArray(input)) return 0;
  let total = 0;
  for (const item of input) {
    if (typeof item === 'string') total += countText(item);
    else if (typeof item === 'number') total += 1;
    else if (Array.isArray(item)) total += item.length;
  }
  return total;
}
