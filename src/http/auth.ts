// Key and account-token authentication. The SDKs put a key in one of three headers — `Authorization:
// Bearer` (OpenAI's, and Claude Code's ANTHROPIC_AUTH_TOKEN), `x-api-key` (Anthropic's) or `api-key`
// (Azure's) — so each is read; the first that holds a credential of the kind the route takes wins, and two
// different ones are refused. Missing, malformed, unknown, revoked and expired credentials all get the same
// 401 body. A key secret (`tg-`) calls models; an account token (`tga-`, docs/adr/0047-accounts.md) only
// manages its account on /v1/account: neither shape passes where the other is asked for, so each is
// refused before any database read.
import { GatewayError, type ErrorCode } from '../errors.js';
import { hashKeySecret, looksLikeAccountToken, looksLikeKeySecret } from '../keys/secret.js';
import type { AccountRecord, AccountStore, KeyRecord, KeyStore } from '../storage/types.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * How old a key record may be for a request that places a hold (chat, embeddings; not a dry run): the
 * hold's admission re-checks in the database that the key is active and unexpired, so a revocation made
 * anywhere still refuses it at once (401); what may lag by this much, on another gateway than the one
 * that made the change, is the key's allowed models, limits and a rotated-out secret
 * (docs/adr/0027-recent-key-rows.md). One lookup round trip per request fewer on PostgreSQL; on SQLite the
 * row's reading and decoding (another process's commit to the file is seen at once there).
 */
export const HOLDING_REQUEST_KEY_MAX_AGE_MS = 1_000;

/** The credential headers a client may send its key in, as Node names them. */
export interface CredentialHeaders {
  readonly authorization?: string | undefined;
  readonly 'x-api-key'?: string | string[] | undefined;
  readonly 'api-key'?: string | string[] | undefined;
}

const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value)?.trim();

/** The one credential of a shape the request carries (undefined for none, or two that differ). */
function credentialOf(headers: CredentialHeaders, looksRight: (value: string) => boolean): string | undefined {
  const bearer = headers.authorization ? BEARER.exec(headers.authorization)?.[1] : undefined;
  let found: string | undefined;
  for (const candidate of [bearer, single(headers['x-api-key']), single(headers['api-key'])]) {
    if (!candidate || !looksRight(candidate)) continue;
    if (found !== undefined && found !== candidate) return undefined;
    found = candidate;
  }
  return found;
}

/** The Tollgate key the request carries: the one secret that looks like one (undefined for none, or two that differ). */
export function keySecretOf(headers: CredentialHeaders): string | undefined {
  return credentialOf(headers, looksLikeKeySecret);
}

/** The account token the request carries (undefined for none, or two that differ). */
export function accountTokenOf(headers: CredentialHeaders): string | undefined {
  return credentialOf(headers, looksLikeAccountToken);
}

/**
 * The record a credential's hash names, or `refused` (401) when there is none or `usable` says no. Only
 * the SHA-256 of a well-shaped credential reaches the database: the comparison happens on the hash,
 * never on the secret itself. A database that does not answer is a 503 the client may retry.
 */
async function lookUp<R>(credential: string | undefined, refused: ErrorCode, find: (hash: string) => Promise<R | undefined>, usable: (record: R) => boolean): Promise<R> {
  if (!credential) throw new GatewayError(refused);
  let record: R | undefined;
  try {
    record = await find(hashKeySecret(credential));
  } catch (error) {
    throw new GatewayError('ledger_unavailable', { headers: { 'retry-after': '1' }, cause: error });
  }
  if (record === undefined || !usable(record)) throw new GatewayError(refused);
  return record;
}

/** `maxAgeMs`: see KeyStore.findByHash; 0 (reads of the key's own figures, /v1/models): read now. */
export function authenticate(keys: KeyStore, headers: CredentialHeaders, maxAgeMs = 0): Promise<KeyRecord> {
  return lookUp(
    keySecretOf(headers),
    'invalid_api_key',
    (hash) => keys.findByHash(hash, maxAgeMs),
    (key) => key.status === 'active' && (key.expiresAt === null || key.expiresAt > Date.now()),
  );
}

/**
 * The account whose self-service token the request carries (/v1/account). A suspended account still
 * authenticates: its holder may read it and manage its keys, only none of them can spend. A rotated or
 * revoked token no longer names any account.
 */
export function authenticateAccount(accounts: AccountStore, headers: CredentialHeaders): Promise<AccountRecord> {
  return lookUp(accountTokenOf(headers), 'invalid_account_token', (hash) => accounts.findByTokenHash(hash), () => true);
}

/** Who pays on a route that takes either credential: the account, and the key when a key secret was sent. */
export interface Payer {
  readonly account: AccountRecord;
  /** null: the account's own token was sent. */
  readonly key: KeyRecord | null;
}

/**
 * An account token, else a key secret standing for its account (/v1/account routes that add credit: a
 * key-holder may buy credit for the account their key spends from). A key must be usable (active,
 * unexpired) to speak for its account; a missing account behind a key is the same 401.
 */
export async function authenticatePayer(accounts: AccountStore, keys: KeyStore, headers: CredentialHeaders): Promise<Payer> {
  if (accountTokenOf(headers) !== undefined || keySecretOf(headers) === undefined) {
    return { account: await authenticateAccount(accounts, headers), key: null };
  }
  const key = await authenticate(keys, headers);
  let account: AccountRecord | undefined;
  try {
    account = await accounts.get(key.accountId);
  } catch (error) {
    throw new GatewayError('ledger_unavailable', { headers: { 'retry-after': '1' }, cause: error });
  }
  if (account === undefined) throw new GatewayError('invalid_api_key');
  return { account, key };
}
