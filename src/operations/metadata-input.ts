// Reading a key's metadata (the operator's own labels: a customer id, a plan): an object of string
// values, small enough to travel with every key object. A bad one is 400 invalid_request naming the field.
import { GatewayError } from '../errors.js';
import type { KeyMetadata } from '../storage/types.js';

export const MAX_METADATA_KEYS = 50;
export const MAX_METADATA_KEY_LENGTH = 40;
export const MAX_METADATA_VALUE_LENGTH = 500;

export function metadataOf(value: unknown): KeyMetadata {
  const invalid = (message: string): never => {
    throw new GatewayError('invalid_request', { param: 'metadata', message: `Invalid 'metadata': ${message}` });
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) invalid('expected an object of string values');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_METADATA_KEYS) invalid(`at most ${MAX_METADATA_KEYS} keys`);
  for (const [name, text] of entries) {
    if (name.length === 0 || name.length > MAX_METADATA_KEY_LENGTH) invalid(`key names have 1 to ${MAX_METADATA_KEY_LENGTH} characters`);
    if (typeof text !== 'string' || text.length > MAX_METADATA_VALUE_LENGTH) {
      invalid(`"${name}" must be a string of at most ${MAX_METADATA_VALUE_LENGTH} characters`);
    }
  }
  return Object.fromEntries(entries) as KeyMetadata;
}
