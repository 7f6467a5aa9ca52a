// Token estimates for holds and for settling without upstream usage, with the o200k_base BPE
// (gpt-tokenizer) in bounded time (token-tally.ts). Holds are estimates by contract; exact charges always
// come from upstream usage.
import { COUNT_BUDGET_MS, TokenTally } from './token-tally.js';

/** Per-message framing the chat format adds (role markers), as OpenAI documents it. */
const TOKENS_PER_MESSAGE = 3;
/** The assistant reply is primed with a few tokens. */
const TOKENS_REPLY_PRIMING = 3;
/** An image part, without decoding it: OpenAI's cost of one 1024×1024 high-detail tile set. */
export const IMAGE_PART_TOKENS = 765;
/** Above this many characters a blob (audio, file data) is estimated at 4 characters per token. */
const BLOB_CHARS = 8_192;

/** The token count of one text (exact for ordinary text; see TokenTally past its time budget). */
export function countText(text: string): number {
  if (text.length === 0) return 0;
  const tally = new TokenTally(COUNT_BUDGET_MS);
  tally.add(text);
  return tally.total();
}

/**
 * A request's input as fixed counts (framing, images, blobs) and texts to tokenize; the texts are counted
 * last, together, under one time budget and giving the event loop a turn between slices.
 */
class InputParts {
  fixed = 0;
  private readonly texts: string[] = [];

  text(text: string): void {
    if (text.length > 0) this.texts.push(text);
  }

  json(value: unknown): void {
    if (value === undefined || value === null) return;
    const text = JSON.stringify(value);
    if (text.length > BLOB_CHARS) this.fixed += Math.ceil(text.length / 4);
    else this.text(text);
  }

  async count(): Promise<number> {
    const tally = new TokenTally(COUNT_BUDGET_MS);
    await tally.addAll(this.texts);
    return this.fixed + tally.total();
  }
}

function addContentPart(parts: InputParts, part: unknown): void {
  if (typeof part === 'string') return parts.text(part);
  if (typeof part !== 'object' || part === null) return;
  const p = part as Record<string, unknown>;
  if (typeof p.text === 'string') return parts.text(p.text);
  if (p.type === 'image_url' || p.type === 'image' || p.image_url !== undefined) {
    parts.fixed += IMAGE_PART_TOKENS;
    return;
  }
  parts.json(part);
}

function addContent(parts: InputParts, content: unknown): void {
  if (typeof content === 'string') parts.text(content);
  else if (Array.isArray(content)) for (const part of content) addContentPart(parts, part);
  else parts.json(content);
}

function addMessage(parts: InputParts, message: Record<string, unknown>): void {
  parts.fixed += TOKENS_PER_MESSAGE;
  if (typeof message.role === 'string') parts.text(message.role);
  addContent(parts, message.content);
  if (typeof message.name === 'string') {
    parts.text(message.name);
    parts.fixed += 1;
  }
  parts.json(message.tool_calls);
  parts.json(message.function_call);
  if (typeof message.tool_call_id === 'string') parts.text(message.tool_call_id);
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
}): Promise<number> {
  const parts = new InputParts();
  parts.fixed += TOKENS_REPLY_PRIMING;
  for (const message of body.messages) addMessage(parts, message);
  parts.json(body.tools);
  parts.json(body.functions);
  const format = body.response_format as { type?: unknown; json_schema?: unknown } | undefined | null;
  if (format && format.type === 'json_schema') parts.json(format.json_schema);
  return parts.count();
}

/** Embedding input: a string, strings, or token arrays (counted by their length). */
export function countEmbeddingInput(input: unknown): Promise<number> {
  const parts = new InputParts();
  if (typeof input === 'string') parts.text(input);
  else if (Array.isArray(input)) {
    for (const item of input) {
      if (typeof item === 'string') parts.text(item);
      else if (typeof item === 'number') parts.fixed += 1;
      else if (Array.isArray(item)) parts.fixed += item.length;
    }
  }
  return parts.count();
}
