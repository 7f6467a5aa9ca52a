// providers.<id>.serves: the client APIs an upstream speaks natively (product.md §14), its kind's by default.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, parseConfig } from '../../../src/config/load.js';

const providers = (extra: string) => `providers:
  oa:
    kind: openai
    api_key: sk-1
  an:
    kind: anthropic
    api_key: sk-2
  vllm:
    kind: openai-compatible
    base_url: http://127.0.0.1:8000/v1
${extra}models:
  m:
    upstreams: [{ provider: oa, model: x }]
    price: { input: 1, output: 2 }
    max_output_tokens: 100
`;

describe('providers.<id>.serves', () => {
  test('defaults to the kind’s: openai chat and responses, anthropic messages, a compatible server chat', () => {
    const config = parseConfig(providers(''), '/tmp/t.yaml', {});
    assert.deepEqual(config.providers.get('oa')!.serves, ['chat', 'responses']);
    assert.deepEqual(config.providers.get('an')!.serves, ['messages']);
    assert.deepEqual(config.providers.get('vllm')!.serves, ['chat']);
  });

  test('a compatible server may declare messages and responses', () => {
    const config = parseConfig(providers('  local:\n    kind: openai-compatible\n    base_url: http://127.0.0.1:9/v1\n    serves: [chat, messages, responses]\n'), '/tmp/t.yaml', {});
    assert.deepEqual(config.providers.get('local')!.serves, ['chat', 'messages', 'responses']);
  });

  test('an API the kind cannot serve, or an unknown one, is a config error naming the path', () => {
    for (const [serves, message] of [
      ['[messages]', /providers\.g\.serves: kind gemini cannot serve messages/],
      ['[images]', /providers\.g\.serves/],
      ['[]', /providers\.g\.serves/],
    ] as const) {
      assert.throws(
        () => parseConfig(providers(`  g:\n    kind: gemini\n    api_key: k\n    serves: ${serves}\n`), '/tmp/t.yaml', {}),
        (error: unknown) => error instanceof ConfigError && message.test(error.message),
        serves,
      );
    }
  });
});
