// The config's default budget (`limits.budget`) is money like any other: exact to the nano-dollar, and
// never past the largest amount the ledger holds — a config problem that names the maximum.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_NANO } from '../../../src/billing/money.js';
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

const withBudget = (budget: string) => parseConfig(`${BASE}limits:\n  budget: ${budget}\n`, '/etc/tollgate/tollgate.yaml', {});

describe('limits.budget', () => {
  test('may be the maximum the ledger holds, read exactly', () => {
    assert.equal(withBudget('"8388608"').limits.budget, MAX_NANO);
    assert.equal(withBudget('8388607.999999999').limits.budget, MAX_NANO - 1);
  });

  test('past the maximum is a config problem that names it', () => {
    for (const budget of ['"8388608.000000001"', '17000005.50', '"1e20"']) {
      assert.throws(
        () => withBudget(budget),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, String(error));
          assert.deepEqual(error.problems, ['limits.budget: must be at most 8388608 USD, the largest amount the ledger holds']);
          return true;
        },
        budget,
      );
    }
  });
});
