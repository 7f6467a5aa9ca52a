// A tool call's arguments as a Messages tool_use input, which is always an object. Arguments that are not a
// JSON object (a model's broken JSON, a bare string) become {}: the client's tool then reports the missing
// arguments to the model, which tries again — where the Anthropic SDK's stream parser would throw on them.
import { isJsonObject, type JsonObject } from '../../../json-object.js';

/** The arguments' object, or undefined when they are not one ('' — a tool without parameters — is {}). */
function parsed(text: string): JsonObject | undefined {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The input object of a whole answer's tool call. */
export function toolInput(args: unknown): JsonObject {
  if (isJsonObject(args)) return args;
  return (typeof args === 'string' && parsed(args)) || {};
}

/** The input's JSON text for a stream's input_json_delta: the model's own text when it is an object, else `{}`. */
export function toolInputJson(args: string): string {
  const value = parsed(args);
  return value === undefined || args.trim() === '' ? '{}' : args;
}
