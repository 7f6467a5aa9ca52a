// Request ids: `req_` + 12 hex digits of the millisecond clock + 16 hex digits from a random UUID.
// Time-ordered, so the ledger's request_id indexes grow at their tail instead of at random pages
// (fewer page writes per commit), and still unguessable and unique in practice (62 random bits per
// millisecond).
import { randomUUID } from 'node:crypto';

export function newRequestId(): string {
  // randomUUID draws from a cached entropy pool (much cheaper than randomBytes for 8 bytes); its last
  // 16 hex digits (after the dash at 18) carry 62 random bits (2 bits of the first are the variant).
  const random = randomUUID();
  return `req_${Date.now().toString(16).padStart(12, '0')}${random.slice(19, 23)}${random.slice(24, 36)}`;
}
