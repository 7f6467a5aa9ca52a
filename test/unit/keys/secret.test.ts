// Key secrets: tg- + 256 random bits in base64url; only the SHA-256 hash is stored.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyId, generateKeySecret, hashKeySecret, keyPrefix, looksLikeKeySecret } from '../../../src/keys/secret.js';

const VALID = `tg-${'A'.repeat(43)}`;

describe('generateKeySecret', () => {
  test('has the shape tg- followed by 43 base64url characters', () => {
    for (let i = 0; i < 200; i++) {
      const secret = generateKeySecret();
      assert.match(secret, /^tg-[A-Za-z0-9_-]{43}$/);
      assert.equal(looksLikeKeySecret(secret), true, secret);
    }
  });

  test('carries 256 bits: the part after tg- decodes to 32 bytes', () => {
    assert.equal(Buffer.from(generateKeySecret().slice(3), 'base64url').length, 32);
  });

  test('is unique', () => {
    const secrets = new Set(Array.from({ length: 1000 }, () => generateKeySecret()));
    assert.equal(secrets.size, 1000);
  });
});

describe('hashKeySecret', () => {
  test('is the SHA-256 of the secret in lowercase hex', () => {
    assert.equal(hashKeySecret('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    assert.equal(hashKeySecret(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  test('is deterministic and differs between secrets', () => {
    const secret = generateKeySecret();
    assert.equal(hashKeySecret(secret), hashKeySecret(secret));
    assert.match(hashKeySecret(secret), /^[0-9a-f]{64}$/);
    assert.notEqual(hashKeySecret(secret), hashKeySecret(generateKeySecret()));
  });
});

describe('looksLikeKeySecret', () => {
  test('accepts the exact shape, with - and _ anywhere', () => {
    assert.equal(looksLikeKeySecret(VALID), true);
    assert.equal(looksLikeKeySecret(`tg-${'-_aZ09'.repeat(7)}x`), true);
  });

  test('rejects near-misses', () => {
    const nearMisses = [
      '',
      'tg-',
      `tg-${'A'.repeat(42)}`,
      `tg-${'A'.repeat(44)}`,
      `TG-${'A'.repeat(43)}`,
      `tg_${'A'.repeat(43)}`,
      `sk-${'A'.repeat(43)}`,
      `tg-${'A'.repeat(42)}+`,
      `tg-${'A'.repeat(42)}/`,
      `tg-${'A'.repeat(42)}=`,
      `tg-${'A'.repeat(42)}.`,
      `tg-${'A'.repeat(42)}é`,
      ` ${VALID}`,
      `${VALID} `,
      `${VALID}\n`,
      `Bearer ${VALID}`,
      `${VALID}${VALID}`,
    ];
    for (const value of nearMisses) assert.equal(looksLikeKeySecret(value), false, JSON.stringify(value));
  });
});

describe('keyPrefix and generateKeyId', () => {
  test('the prefix is the first 10 characters of the secret', () => {
    assert.equal(keyPrefix('tg-abcdefghijklmnop'), 'tg-abcdefg');
  });

  test('ids are key_ + 16 hex digits and unique', () => {
    const ids = Array.from({ length: 500 }, () => generateKeyId());
    for (const id of ids) assert.match(id, /^key_[0-9a-f]{16}$/);
    assert.equal(new Set(ids).size, 500);
  });
});
