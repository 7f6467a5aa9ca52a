// What a top-up or an adjustment carries besides its amount (of a key's account or of an account): its
// note or reason, and the request id a retrying caller (Idempotency-Key) pins it with.
import { GatewayError } from '../errors.js';

export const MAX_NOTE_LENGTH = 500;

export interface CreditOptions {
  /** The ledger entry's request id: a random one by default. */
  readonly requestId?: string;
  readonly now?: number;
}

export function noteOf(field: string, value: unknown, required: boolean): string | null {
  if (value === undefined || value === null) {
    if (!required) return null;
  } else if (typeof value === 'string' && value.trim() !== '' && value.length <= MAX_NOTE_LENGTH) {
    return value;
  }
  throw new GatewayError('invalid_request', {
    param: field,
    message: `Invalid '${field}': expected ${required ? 'a' : 'an optional'} non-empty string of at most ${MAX_NOTE_LENGTH} characters.`,
  });
}
