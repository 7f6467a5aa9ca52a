// The text of a convention message's content: a string, or the text parts of an array.
import { isJsonObject } from '../json-object.js';

/** The text of a message's content: a string, or the text parts of an array. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) if (isJsonObject(part) && typeof part.text === 'string') text += part.text;
  return text;
}
