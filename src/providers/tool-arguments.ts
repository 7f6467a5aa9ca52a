// Tool-call arguments: the convention carries them as JSON text, APIs like Anthropic's and Gemini's
// as objects. Arguments that are not a JSON object are the client's error (400, before any hold).
import { GatewayError } from '../errors.js';
import { isJsonObject, type JsonObject } from '../json-object.js';

export function parseToolArguments(text: unknown, param: string): JsonObject {
  if (text === undefined || text === null || text === '') return {};
  if (isJsonObject(text)) return text;
  if (typeof text === 'string') {
    try {
      const parsed: unknown = JSON.parse(text);
      if (isJsonObject(parsed)) return parsed;
    } catch {
      // reported below
    }
  }
  throw new GatewayError('invalid_request', { message: `Invalid '${param}': tool-call arguments must be a JSON object.`, param });
}
