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
