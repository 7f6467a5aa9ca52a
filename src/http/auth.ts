// Key authentication. The SDKs put a key in one of three headers — `Authorization: Bearer` (OpenAI's, and
// Claude Code's ANTHROPIC_AUTH_TOKEN), `x-api-key` (Anthropic's) or `api-key` (Azure's) — so each is read;
// the first that holds a Tollgate key wins, and two different Tollgate keys are refused. Missing,
// malformed, unknown, revoked and expired keys all get the same 401 body.
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

/** The credential headers a client may send its key in, as Node names them. */
export interface CredentialHeaders {
  readonly authorization?: string | undefined;
  readonly 'x-api-key'?: string | string[] | undefined;
  readonly 'api-key'?: string | string[] | undefined;
}

const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value)?.trim();

/** The Tollgate key the request carries: the one secret that looks like one (undefined for none, or two that differ). */
export function keySecretOf(headers: CredentialHeaders): string | undefined {
  const bearer = headers.authorization ? BEARER.exec(headers.authorization)?.[1] : undefined;
  let found: string | undefined;
  for (const candidate of [bearer, single(headers['x-api-key']), single(headers['api-key'])]) {
    if (!candidate || !looksLikeKeySecret(candidate)) continue;
    if (found !== undefined && found !== candidate) return undefined;
    found = candidate;
  }
  return found;
}

/** `maxAgeMs`: see KeyStore.findByHash; 0 (reads of the key's own figures, /v1/models): read now. */
export async function authenticate(keys: KeyStore, headers: CredentialHeaders, maxAgeMs = 0): Promise<KeyRecord> {
  const secret = keySecretOf(headers);
  if (!secret) throw new GatewayError('invalid_api_key');
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
