// The input estimate of a chat completion request: every message, plus tool and function definitions
// and a JSON schema response format (all of which the model reads as input).
import { InputParts } from '../../tokens/count-text.js';

/** Per-message framing the chat format adds (role markers), as OpenAI documents it. */
const TOKENS_PER_MESSAGE = 3;
/** The assistant reply is primed with a few tokens. */
const TOKENS_REPLY_PRIMING = 3;
/** An image part, without decoding it: OpenAI's cost of one 1024×1024 high-detail tile set. */
export const IMAGE_PART_TOKENS = 765;

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
