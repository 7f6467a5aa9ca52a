// Key secrets: `tg-` + 256 random bits (base64url). Only a SHA-256 hash is stored: the secret has full
// entropy, so a slow password hash would add nothing but latency (docs/adr/0004-key-secrets.md).
import { createHash, randomBytes } from 'node:crypto';

const SECRET_SHAPE = /^tg-[A-Za-z0-9_-]{43}$/;
const PREFIX_LENGTH = 10;

export function generateKeySecret(): string {
  return `tg-${randomBytes(32).toString('base64url')}`;
}

export function hashKeySecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Rejects malformed bearer tokens before they reach the database. */
export function looksLikeKeySecret(value: string): boolean {
  return SECRET_SHAPE.test(value);
}

export function keyPrefix(secret: string): string {
  return secret.slice(0, PREFIX_LENGTH);
}

export function generateKeyId(): string {
  return `key_${randomBytes(8).toString('hex')}`;
}

// Account tokens (docs/adr/0047-accounts.md): `tga-` + 256 random bits, hashed like key secrets. They
// manage an account through /v1/account and never call a model.
const ACCOUNT_TOKEN_SHAPE = /^tga-[A-Za-z0-9_-]{43}$/;

export function generateAccountToken(): string {
  return `tga-${randomBytes(32).toString('base64url')}`;
}

export function looksLikeAccountToken(value: string): boolean {
  return ACCOUNT_TOKEN_SHAPE.test(value);
}

export function generateAccountId(): string {
  return `acct_${randomBytes(8).toString('hex')}`;
}

// Redemption codes (docs/adr/0051-redemption-codes.md): `tgr-` + 160 random bits in lowercase base32
// (RFC 4648's alphabet a–z, 2–7: no case to get wrong, no 0/O or 1/l to mix up when typed), hashed
// like key secrets. A code is read case-insensitively, around spaces.
const CODE_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const CODE_SHAPE = /^tgr-[a-z2-7]{32}$/;

export function generateRedemptionCode(): string {
  const bytes = randomBytes(20);
  let bits = 0;
  let value = 0;
  let out = 'tgr-';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += CODE_ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

/** The code as stored and compared: trimmed and lower-cased (a code typed in capitals is the same code). */
export function normaliseRedemptionCode(value: string): string {
  return value.trim().toLowerCase();
}

/** A normalised code's shape: anything else is refused before the database. */
export function looksLikeRedemptionCode(value: string): boolean {
  return CODE_SHAPE.test(value);
}

/** The first characters of a code (`tgr-` and 6 of its 32), kept to recognise it in listings. */
export function redemptionCodePrefix(code: string): string {
  return code.slice(0, PREFIX_LENGTH);
}

export function generateCodeId(): string {
  return `rc_${randomBytes(8).toString('hex')}`;
}

export function generateCodeBatchId(): string {
  return `batch_${randomBytes(8).toString('hex')}`;
}
