// The test config for the Anthropic Messages API (POST /v1/messages, product.md §14): mockConfig's models
// plus an Anthropic provider in front of a mock Anthropic server, and the models the Messages tests call.
import type { MockAnthropic } from './mock-anthropic.js';
import { ANTHROPIC_MOCK_KEY } from './mock-anthropic.js';
import { mockConfig } from './mock-config.js';
import type { MockUpstream } from './mock-upstream.js';

/** claude-test's prices, USD per 1M tokens; nano-dollars per token are these × 1000. */
export const CLAUDE_PRICES = { input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75, cacheWrite1h: 6 } as const;
export const CLAUDE_MAX_OUTPUT = 4000;
export const CLAUDE_TOOL_OVERHEAD = 300;

/**
 * mockConfig plus provider `anthropic-mock` (kind anthropic, the mock's key) and models:
 *   claude-test     (upstream claude-sonnet-4-5, CLAUDE_PRICES, max_output_tokens CLAUDE_MAX_OUTPUT, tool_overhead_tokens CLAUDE_TOOL_OVERHEAD)
 *   claude-servers  (the same, allow_server_tools: true)
 * gpt-test stays on the OpenAI-compatible mock, which serves only chat completions: Messages reaches it
 * through the translated cell (messages-chat-config.ts adds more such models).
 */
export function messagesConfig(mock: MockUpstream, anthropic: MockAnthropic, extraYaml = ''): string {
  const model = (extra: string) => `
    upstreams: [{ provider: anthropic-mock, model: claude-sonnet-4-5 }]
    price: { input: ${CLAUDE_PRICES.input}, output: ${CLAUDE_PRICES.output}, cached_input: ${CLAUDE_PRICES.cachedInput}, cache_write: ${CLAUDE_PRICES.cacheWrite}, cache_write_1h: ${CLAUDE_PRICES.cacheWrite1h} }
    max_output_tokens: ${CLAUDE_MAX_OUTPUT}
    tool_overhead_tokens: ${CLAUDE_TOOL_OVERHEAD}${extra}`;
  return mockConfig(mock, extraYaml)
    .replace(
      '\nproviders:\n',
      `\nproviders:\n  anthropic-mock:\n    kind: anthropic\n    base_url: ${anthropic.url}\n    api_key: ${ANTHROPIC_MOCK_KEY}\n    timeouts: { connect_ms: 2000, first_byte_ms: 5000, idle_ms: 5000, total_ms: 30000 }\n    cooldown: { failures: 1000000, seconds: 1 }\n`,
    )
    .replace('\nmodels:\n', `\nmodels:\n  claude-test:${model('')}\n  claude-servers:${model('\n    allow_server_tools: true')}\n`);
}

/** Nano-dollars of Anthropic usage (its convention: input_tokens without cache reads and writes) at CLAUDE_PRICES. */
export function claudeCostNano(usage: {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_creation?: { ephemeral_5m_input_tokens?: number; ephemeral_1h_input_tokens?: number };
}): number {
  const writes1h = usage.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  const writes = usage.cache_creation_input_tokens ?? 0;
  const micro =
    usage.input_tokens * CLAUDE_PRICES.input * 1_000_000 +
    (usage.cache_read_input_tokens ?? 0) * CLAUDE_PRICES.cachedInput * 1_000_000 +
    (writes - writes1h) * CLAUDE_PRICES.cacheWrite * 1_000_000 +
    writes1h * CLAUDE_PRICES.cacheWrite1h * 1_000_000 +
    usage.output_tokens * CLAUDE_PRICES.output * 1_000_000;
  // micro-nano per token × tokens → nano, rounded up once (the gateway's rule).
  return Math.ceil(Math.round(micro) / 1000);
}
