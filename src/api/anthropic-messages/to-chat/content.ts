// Messages content blocks → chat completions message parts: text as text, images as image_url parts (a
// data URI for base64, the URL as given), a PDF as a `file` part with its data URI, a text document or
// search result as text. What chat has no way to carry by reference (a file id, a PDF by URL) is a 400
// before any hold: the model would otherwise answer without what the client showed it.
import { GatewayError } from '../../../errors.js';
import { isJsonObject, type JsonObject } from '../../../json-object.js';

/** A 400 for content chat completions cannot carry. */
export function cannotCarry(what: string, param: string): GatewayError {
  return new GatewayError('invalid_request', {
    param,
    message: `${what} cannot be sent to this model: its upstream speaks chat completions, which have no place for it.`,
  });
}

/** A text part. */
export function textPart(text: string): JsonObject {
  return { type: 'text', text };
}

/** An image block's source as an image_url part. */
function imagePart(source: unknown, param: string): JsonObject {
  if (isJsonObject(source) && source.type === 'base64' && typeof source.media_type === 'string' && typeof source.data === 'string') {
    return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  }
  if (isJsonObject(source) && source.type === 'url' && typeof source.url === 'string') return { type: 'image_url', image_url: { url: source.url } };
  throw cannotCarry(`An image given by ${isJsonObject(source) ? String(source.type) : 'an unknown source'}`, param);
}

/** The text of blocks that hold text (a string, or text blocks). */
function blocksText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter(isJsonObject)
    .map((block) => (typeof block.text === 'string' ? block.text : ''))
    .filter((text) => text !== '')
    .join('\n');
}

/** A titled text, as the model reads a document or a search result. */
function titled(title: unknown, text: string): string {
  return typeof title === 'string' && title !== '' ? `${title}\n${text}` : text;
}

function documentPart(block: JsonObject, param: string): JsonObject {
  const source = block.source;
  if (isJsonObject(source) && source.type === 'text' && typeof source.data === 'string') return textPart(titled(block.title, source.data));
  if (isJsonObject(source) && source.type === 'content') return textPart(titled(block.title, blocksText(source.content)));
  if (isJsonObject(source) && source.type === 'base64' && typeof source.data === 'string') {
    const mediaType = typeof source.media_type === 'string' ? source.media_type : 'application/pdf';
    const filename = typeof block.title === 'string' && block.title !== '' ? block.title : 'document.pdf';
    return { type: 'file', file: { filename, file_data: `data:${mediaType};base64,${source.data}` } };
  }
  throw cannotCarry(`A document given by ${isJsonObject(source) ? String(source.type) : 'an unknown source'}`, param);
}

/**
 * One user content block (not a tool_result) as a chat part; undefined for a block chat has no use for,
 * whose type then goes in `dropped`.
 */
export function userPart(block: unknown, param: string, dropped: Set<string>): JsonObject | undefined {
  if (typeof block === 'string') return textPart(block);
  if (!isJsonObject(block)) return undefined;
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? textPart(block.text) : undefined;
    case 'image':
      return imagePart(block.source, param);
    case 'document':
      return documentPart(block, param);
    case 'search_result':
      return textPart(titled(block.title, `${typeof block.source === 'string' ? `${block.source}\n` : ''}${blocksText(block.content)}`));
    default:
      dropped.add(`messages[].content[].${String(block.type)}`);
      return undefined;
  }
}

/** Parts as a message's content: one string when they are all text (what every compatible server takes), else the parts. */
export function partsContent(parts: readonly JsonObject[]): string | JsonObject[] {
  if (parts.every((part) => part.type === 'text')) return parts.map((part) => part.text as string).join('\n');
  return [...parts];
}

/** A tool_result's content: its text for the tool message, and its images (a tool message carries text only). */
export function toolResultContent(content: unknown, param: string, dropped: Set<string>): { text: string; media: JsonObject[] } {
  if (typeof content === 'string') return { text: content, media: [] };
  const texts: string[] = [];
  const media: JsonObject[] = [];
  if (Array.isArray(content)) {
    for (const block of content) {
      const part = userPart(block, param, dropped);
      if (!part) continue;
      if (part.type === 'text') texts.push(part.text as string);
      else media.push(part);
    }
  }
  return { text: texts.join('\n'), media };
}
