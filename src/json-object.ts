// The one JSON-object guard, for the edges where untyped JSON enters (request bodies, upstream replies).

export type JsonObject = Record<string, unknown>;

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
