// The standard test config in front of the mock upstream: the end-to-end tests write it for a spawned
// gateway (test/support/gateway-process.ts), the in-process HTTP tests load it (test/support/in-process.ts).
import type { MockUpstream } from './mock-upstream.js';
import { TEST_PRICES } from './money.js';

/**
 * A config with one OpenAI-compatible provider ("mock", api key "sk-mock-upstream-secret", default
 * retries: 1, cool-down effectively off) in front of the mock upstream, and these models (at TEST_PRICES):
 *   gpt-test (chat, upstream gpt-4o-mini), gpt-reasoning (chat, upstream o3-mini-reasoning),
 *   gpt-locked (chat; tests create keys that may not use it), embed-test (embedding).
 * Chat models: max_output_tokens 1000, context_window 8000.
 */
export function mockConfig(mock: MockUpstream, extraYaml = ''): string {
  return `
server:
  host: 127.0.0.1
  port: 0
database: "{{DB}}"
providers:
  mock:
    kind: openai-compatible
    base_url: ${mock.url}
    api_key: sk-mock-upstream-secret
    timeouts: { connect_ms: 2000, first_byte_ms: 5000, idle_ms: 5000, total_ms: 30000 }
    # Tests provoke failures on purpose; a cool-down would leak from one test into the next.
    cooldown: { failures: 1000000, seconds: 1 }
models:
  gpt-test:
    type: chat
    upstreams: [{ provider: mock, model: gpt-4o-mini }]
    price: { input: ${TEST_PRICES.input}, output: ${TEST_PRICES.output}, cached_input: ${TEST_PRICES.cachedInput} }
    context_window: 8000
    max_output_tokens: 1000
  gpt-reasoning:
    type: chat
    upstreams: [{ provider: mock, model: o3-mini-reasoning }]
    price: { input: ${TEST_PRICES.input}, output: ${TEST_PRICES.output} }
    context_window: 8000
    max_output_tokens: 1000
  gpt-locked:
    type: chat
    upstreams: [{ provider: mock, model: gpt-4o }]
    price: { input: ${TEST_PRICES.input}, output: ${TEST_PRICES.output} }
    context_window: 8000
    max_output_tokens: 1000
  embed-test:
    type: embedding
    upstreams: [{ provider: mock, model: text-embedding-3-small }]
    price: { input: ${TEST_PRICES.embedding} }
${extraYaml}`;
}
