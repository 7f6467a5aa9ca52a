// The test config for the Messages API's translated cells (docs/adr/0043-messages-to-chat.md):
// messagesConfig plus the upstreams a Messages request reaches only through chat completions.
import type { MockAnthropic } from './mock-anthropic.js';
import { messagesConfig } from './messages-config.js';
import type { MockUpstream } from './mock-upstream.js';
import { TEST_PRICES } from './money.js';

/** gpt-test's and gpt-azure's max_output_tokens (mockConfig's chat models'). */
export const GPT_MAX_OUTPUT = 1000;
/** gpt-cache-write's cache_write price, USD per 1M tokens: ten times its input price. */
export const CACHE_WRITE_PRICE = 10;

/**
 * messagesConfig (claude-test on the mock Anthropic; gpt-test, gpt-reasoning on the OpenAI-compatible mock,
 * which serves only chat completions) plus:
 *   azure-mock   kind azure-openai in front of the same mock (deployment paths, api-key)
 *   gemini-off   kind gemini, never called (a Gemini cell is refused before any call)
 * and models:
 *   gpt-azure      (azure-mock, deployment gpt-4o-mini, TEST_PRICES)
 *   gemini-test    (gemini-off)
 *   claude-or-gpt  (anthropic-mock claude-sonnet-4-5 first, then mock gpt-4o-mini: a native cell, then a translated one)
 *   gpt-cache-write (mock gpt-4o-mini, TEST_PRICES plus cache_write: CACHE_WRITE_PRICE — a hold that priced a
 *                   cache write would show it)
 */
export function messagesChatConfig(mock: MockUpstream, anthropic: MockAnthropic): string {
  const price = `price: { input: ${TEST_PRICES.input}, output: ${TEST_PRICES.output}, cached_input: ${TEST_PRICES.cachedInput} }`;
  const timeouts = 'timeouts: { connect_ms: 2000, first_byte_ms: 5000, idle_ms: 5000, total_ms: 30000 }';
  return messagesConfig(mock, anthropic)
    .replace(
      '\nproviders:\n',
      `\nproviders:
  azure-mock:
    kind: azure-openai
    base_url: ${mock.origin}
    api_key: azure-mock-key
    ${timeouts}
    cooldown: { failures: 1000000, seconds: 1 }
  gemini-off:
    kind: gemini
    base_url: http://127.0.0.1:9
    api_key: gemini-never-called
`,
    )
    .replace(
      '\nmodels:\n',
      `\nmodels:
  gpt-azure:
    upstreams: [{ provider: azure-mock, model: gpt-4o-mini }]
    ${price}
    max_output_tokens: ${GPT_MAX_OUTPUT}
  gemini-test:
    upstreams: [{ provider: gemini-off, model: gemini-2.5-flash }]
    ${price}
    max_output_tokens: ${GPT_MAX_OUTPUT}
  claude-or-gpt:
    upstreams: [{ provider: anthropic-mock, model: claude-sonnet-4-5 }, { provider: mock, model: gpt-4o-mini }]
    ${price}
    max_output_tokens: ${GPT_MAX_OUTPUT}
  gpt-cache-write:
    upstreams: [{ provider: mock, model: gpt-4o-mini }]
    price: { input: ${TEST_PRICES.input}, output: ${TEST_PRICES.output}, cached_input: ${TEST_PRICES.cachedInput}, cache_write: ${CACHE_WRITE_PRICE} }
    max_output_tokens: ${GPT_MAX_OUTPUT}
`,
    );
}
