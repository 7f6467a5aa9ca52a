// The redemption guess limit's config (docs/adr/0051-redemption-codes.md): 10 failures per 10 minutes by
// default; each a positive whole number (an env-substituted string too), anything else a config problem
// that names the key.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, parseConfig } from '../../../src/config/load.js';

const BASE = `providers:
  openai-main:
    kind: openai
    api_key: sk-test-key
models:
  gpt-4o-mini:
    upstreams:
      - provider: openai-main
        model: gpt-4o-mini
    price: { input: 0.15, output: 0.60 }
    max_output_tokens: 16384
`;

const load = (limits = '') => parseConfig(`${BASE}${limits ? `limits:\n${limits}` : ''}`, '/etc/tollgate/tollgate.yaml', {});

describe('limits.redeem_failures and redeem_window_seconds', () => {
  test('default to 10 failures in 600 s', () => {
    const { limits } = load();
    assert.deepEqual([limits.redeemFailures, limits.redeemWindowSeconds], [10, 600]);
  });

  test('take positive whole numbers, as numbers or strings', () => {
    const { limits } = load('  redeem_failures: 3\n  redeem_window_seconds: "60"\n');
    assert.deepEqual([limits.redeemFailures, limits.redeemWindowSeconds], [3, 60]);
  });

  test('anything else is a config problem naming the key', () => {
    for (const [key, value] of [
      ['redeem_failures', '0'],
      ['redeem_failures', '2.5'],
      ['redeem_window_seconds', '-1'],
      ['redeem_window_seconds', 'soon'],
    ]) {
      assert.throws(
        () => load(`  ${key}: ${value}\n`),
        (error: unknown) => error instanceof ConfigError && error.problems.some((p) => p.startsWith(`limits.${key}`)),
        `${key}: ${value}`,
      );
    }
  });
});
