// Bearer-key authentication. Missing, malformed, unknown, revoked and expired keys all get the same 401 body.
import { GatewayError } from '../errors.js';
import { hashKeySecret, looksLikeKeySecret } from '../keys/secret.js';
import type { KeyRecord, KeyStore } from '../storage/types.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export async function authenticate(keys: KeyStore, authorization: string | undefined): Promise<KeyRecord> {
  const secret = authorization ? BEARER.exec(authorization)?.[1] : undefined;
  if (!secret || !looksLikeKeySecret(secret)) throw new GatewayError('invalid_api_key');
  let key: KeyRecord | undefined;
  try {
    // Looked up by its SHA-256: the comparison happens on the hash, never on the secret itself.
    key = await keys.findByHash(hashKeySecret(secret));
  } catch (error) {
    throw new GatewayError('ledger_unavailable', { headers: { 'retry-after': '1' }, cause: error });
  }
  if (!key || key.status !== 'active' || (key.expiresAt !== null && key.expiresAt <= Date.now())) throw new GatewayError('invalid_api_key');
  return key;
}
