// The input estimate of a Responses request (its hold's input side): `instructions`, every input item —
// messages with their text and image parts, function calls and their outputs, reasoning items' summary
// text (never `encrypted_content`: opaque bytes, not the model's text) — and the tool definitions and a
// JSON schema text format, which the model reads as input. An `item_reference` adds nothing here: the
// context it stands for is recorded with the response that made it (bind.ts adds it). Long texts and the
// tool definitions (keyed by the JSON the client sent) are remembered across requests (tokens/block-counts.ts).
import { isJsonObject, type JsonObject } from '../../json-object.js';
import type { InputCount } from '../../pipeline/client-api.js';
import type { Route } from '../../routing/resolve-route.js';
import { InputParts } from '../../tokens/count-text.js';
import { asksPromptCache } from './to-anthropic/request.js';
import { responsesCellFor } from './to-chat/index.js';
import { memberOf, spanText } from '../json-layout.js';
import { IMAGE_PART_TOKENS } from '../openai-chat/count-input.js';
import { rawLayoutOf } from '../raw-body.js';

/** Per-item framing (role markers), as for a chat message. */
const TOKENS_PER_ITEM = 3;
/** The reply is primed with a few tokens. */
const TOKENS_REPLY_PRIMING = 3;

/** Item fields that are no text the model reads: ids, statuses, opaque state. */
const NOT_READ: ReadonlySet<string> = new Set(['id', 'status', 'encrypted_content', 'call_id', 'type']);

function addPart(parts: InputParts, part: unknown): void {
  if (typeof part === 'string') return parts.text(part);
  if (!isJsonObject(part)) return;
  if (typeof part.text === 'string') return parts.text(part.text);
  if (typeof part.refusal === 'string') return parts.text(part.refusal);
  if (part.type === 'input_image' || part.image_url !== undefined) {
    parts.fixed += IMAGE_PART_TOKENS;
    return;
  }
  parts.json(part);
}

function addContent(parts: InputParts, content: unknown): void {
  if (typeof content === 'string') parts.text(content);
  else if (Array.isArray(content)) for (const part of content) addPart(parts, part);
  else parts.json(content);
}

function addItem(parts: InputParts, item: JsonObject): void {
  parts.fixed += TOKENS_PER_ITEM;
  switch (item.type ?? 'message') {
    case 'message':
      if (typeof item.role === 'string') parts.text(item.role);
      addContent(parts, item.content);
      return;
    case 'function_call':
    case 'custom_tool_call':
      if (typeof item.name === 'string') parts.text(item.name);
      addContent(parts, item.arguments ?? item.input);
      return;
    case 'function_call_output':
    case 'custom_tool_call_output':
      addContent(parts, item.output);
      return;
    case 'reasoning':
      addContent(parts, item.summary);
      if (Array.isArray(item.content)) addContent(parts, item.content);
      return;
    case 'item_reference':
      parts.fixed -= TOKENS_PER_ITEM;
      return;
    default: {
      // Any other item (a shell call and its output, a computer action, ...): what it says, as JSON.
      const read: JsonObject = {};
      for (const [field, value] of Object.entries(item)) if (!NOT_READ.has(field)) read[field] = value;
      parts.json(read);
    }
  }
}

/** The estimate; where the route can reach an Anthropic upstream and the request asks for a prompt cache, the
 * whole prompt is held at the cache-write price (to-anthropic/ marks it with a top-level cache_control). */
export async function countResponsesHold(body: JsonObject, _model: unknown, route: Route): Promise<number | InputCount> {
  const tokens = await countResponsesInput(body);
  if (!asksPromptCache(body) || !route.candidates.some((candidate) => responsesCellFor(candidate) === 'to-anthropic')) return tokens;
  return { tokens, cacheWrite: { tokens, oneHour: false } };
}

/** The JSON text the client sent for a top-level field (the key its count is remembered by), when kept. */
function rawValue(body: JsonObject, key: string): string | undefined {
  const layout = rawLayoutOf(body);
  const member = layout?.text === undefined ? undefined : memberOf(layout.members, key);
  return member && spanText(layout!.text!, member.value);
}

export function countResponsesInput(body: JsonObject): Promise<number> {
  const parts = new InputParts();
  parts.fixed += TOKENS_REPLY_PRIMING;
  if (typeof body.instructions === 'string') parts.text(body.instructions);
  if (typeof body.input === 'string') {
    parts.fixed += TOKENS_PER_ITEM;
    parts.text(body.input);
  } else if (Array.isArray(body.input)) {
    for (const item of body.input) if (isJsonObject(item)) addItem(parts, item);
  }
  parts.json(body.tools, rawValue(body, 'tools'));
  const text = isJsonObject(body.text) ? body.text : undefined;
  const format = isJsonObject(text?.format) ? text.format : undefined;
  if (format?.type === 'json_schema') parts.json(format.schema);
  return parts.count();
}
