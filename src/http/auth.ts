// Bearer-key authentication. Missing, malformed, unknown, revoked and expired keys all get the same 401 body.
import { GatewayError } from '../errors.js';
import { hashKeySecret, looksLikeKeySecret } from '../keys/secret.js';
import type { KeyRecord, KeyStore } from '../storage/types.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * How old a key record may be for a request that places a hold (chat, embeddings; not a dry run): the
 * hold's admission re-checks in the database that the key is active and unexpired, so a revocation made
 * anywhere still refuses it at once (401); what may lag by this much, on another gateway than the one
 * that made the change, is the key's allowed models, limits and a rotated-out secret
 * (docs/adr/0027-recent-key-rows.md). One lookup round trip per request fewer on PostgreSQL.
 */
export const HOLDING_REQUEST_KEY_MAX_AGE_MS = 1_000;

/** `maxAgeMs`: see KeyStore.findByHash; 0 (reads of the key's own figures, /v1/models): read now. */
export async function authenticate(keys: KeyStore, authorization: string | undefined, maxAgeMs = 0): Promise<KeyRecord> {
  const secret = authorization ? BEARER.exec(authorization)?.[1] : undefined;
  if (!secret || !looksLikeKeySecret(secret)) throw new GatewayError('invalid_api_key');
  let key: KeyRecord | undefined;
  try {
    // Looked up by its SHA-256: the comparison happens on the hash, never on the secret itself.
    key = await keys.findByHash(hashKeySecret(secret), maxAgeMs);
  } catch (error) {
    throw new GatewayError('ledger_unavailable', { headers: { 'retry-after': '1' }, cause: error });
  }
  if (!key || key.status !== 'active' || (key.expiresAt !== null && key.expiresAt <= Date.now())) throw new GatewayError('invalid_api_key');
  return key;
}
