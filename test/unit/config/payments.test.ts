// payments.stripe (docs/adr/0050-stripe-top-ups.md): secrets through ${ENV}, amounts in whole cents within
// Stripe's bounds, currency usd only, api_base parsed; every problem names its key.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, parseConfig } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/types.js';

const BASE = `providers:
  openai-main:
    kind: openai
    api_key: sk-test-key
models:
  gpt-4o-mini:
    upstreams: [{ provider: openai-main, model: gpt-4o-mini }]
    price: { input: 0.15, output: 0.60 }
    max_output_tokens: 16384
`;

const STRIPE = (extra = '', env = { key: '${STRIPE_SECRET_KEY}', secret: '${STRIPE_WEBHOOK_SECRET}' }) => `${BASE}payments:
  stripe:
    secret_key: ${env.key}
    webhook_secret: ${env.secret}
    success_url: https://example.com/paid
    cancel_url: https://example.com/cancelled
${extra}`;

const ENV = { STRIPE_SECRET_KEY: 'sk_test_abc', STRIPE_WEBHOOK_SECRET: 'whsec_abc' };

const parse = (yaml: string, env: NodeJS.ProcessEnv = ENV): Config => parseConfig(yaml, '/etc/tollgate.yaml', env);

function problemsOf(yaml: string, env: NodeJS.ProcessEnv = ENV): readonly string[] {
  try {
    parse(yaml, env);
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.problems;
  }
  assert.fail('the config parsed');
}

describe('payments.stripe', () => {
  test('absent: payments are off', () => {
    assert.equal(parse(BASE).payments.stripe, undefined);
  });

  test('secrets from the environment, defaults for currency and bounds, api_base as a URL', () => {
    const stripe = parse(STRIPE('    api_base: http://127.0.0.1:12111\n')).payments.stripe!;
    assert.deepEqual(
      { ...stripe, apiBase: stripe.apiBase?.href },
      {
        secretKey: 'sk_test_abc',
        webhookSecret: 'whsec_abc',
        currency: 'usd',
        minAmount: 5_000_000_000,
        maxAmount: 1_000_000_000_000,
        successUrl: 'https://example.com/paid',
        cancelUrl: 'https://example.com/cancelled',
        apiBase: 'http://127.0.0.1:12111/',
      },
    );
    assert.equal(parse(STRIPE('    currency: USD\n    min_amount: "0.50"\n    max_amount: 999999.99\n')).payments.stripe!.maxAmount, 999_999_990_000_000);
  });

  test('each problem names its key', () => {
    const cases: [string, NodeJS.ProcessEnv, RegExp][] = [
      [STRIPE('    currency: eur\n'), ENV, /payments\.stripe\.currency: must be usd/],
      [STRIPE('    min_amount: 0.49\n'), ENV, /payments\.stripe\.min_amount: expected a USD amount in whole cents from 0\.50/],
      [STRIPE('    max_amount: 1000000\n'), ENV, /payments\.stripe\.max_amount: expected/],
      [STRIPE('    min_amount: 5.005\n'), ENV, /payments\.stripe\.min_amount: expected/],
      [STRIPE('    min_amount: 50\n    max_amount: 10\n'), ENV, /payments\.stripe\.min_amount: must not exceed payments\.stripe\.max_amount/],
      [STRIPE('', { key: '${STRIPE_SECRET_KEY:-}', secret: 'whsec_x' }), {}, /payments\.stripe\.secret_key: empty/],
      [STRIPE('', { key: 'pk_test_publishable', secret: 'whsec_x' }), {}, /payments\.stripe\.secret_key: expected a Stripe secret key/],
      [STRIPE('', { key: 'sk_test_x', secret: 'not-a-secret' }), {}, /payments\.stripe\.webhook_secret: expected the endpoint's signing secret/],
      [STRIPE('    api_base: ftp://x\n'), ENV, /payments\.stripe\.api_base/],
      [STRIPE('    surprise: 1\n'), ENV, /payments\.stripe\.surprise: unknown key/],
    ];
    for (const [yaml, env, problem] of cases) {
      const problems = problemsOf(yaml, env);
      assert.ok(problems.some((p) => problem.test(p)), `${problem}: ${problems.join('; ')}`);
    }
    // A secret is never echoed in a problem.
    assert.ok(!problemsOf(STRIPE('', { key: 'pk_test_publishable', secret: 'whsec_x' }), {}).join(' ').includes('pk_test_publishable'));
  });
});
