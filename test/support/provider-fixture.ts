// The ProviderConfig and UpstreamTarget the unit and contract tests hand to adapters and the pipeline.
import type { ProviderConfig } from '../../src/config/types.js';
import { DEFAULT_STRIP_FIELDS } from '../../src/config/schema.js';
import type { UpstreamTarget } from '../../src/providers/types.js';

/**
 * An `openai` provider at https://api.openai.com/v1 with every default the config loader fills in
 * (test/unit/config/load.test.ts checks the loader against exactly this); `overrides` set what a test is about.
 */
export function testProvider(overrides: Partial<ProviderConfig> = {}): ProviderConfig {
  return {
    id: 'openai-main',
    kind: 'openai',
    baseUrl: 'https://api.openai.com/v1',
    origin: 'https://api.openai.com',
    basePath: '/v1',
    apiKey: 'sk-test-key',
    configured: true,
    apiVersion: undefined,
    retries: 1,
    cooldown: { failures: 3, seconds: 30 },
    timeouts: { connectMs: 5000, firstByteMs: 60_000, idleMs: 60_000, totalMs: 600_000 },
    onClientDisconnect: 'abort',
    drainMaxConcurrent: 32,
    stripFields: DEFAULT_STRIP_FIELDS,
    serves: ['chat', 'responses'],
    ...overrides,
  };
}

/** A keyless `openai-compatible` server on loopback (vLLM and the like), with the same defaults. */
export function testCompatibleProvider(overrides: Partial<ProviderConfig> = {}): ProviderConfig {
  return testProvider({
    id: 'compat',
    kind: 'openai-compatible',
    baseUrl: 'http://127.0.0.1:8000/v1',
    origin: 'http://127.0.0.1:8000',
    apiKey: '',
    serves: ['chat'],
    ...overrides,
  });
}

/** An `anthropic` provider at https://api.anthropic.com with the same defaults. */
export function testAnthropicProvider(overrides: Partial<ProviderConfig> = {}): ProviderConfig {
  return testProvider({
    id: 'anthropic-main',
    kind: 'anthropic',
    baseUrl: 'https://api.anthropic.com',
    origin: 'https://api.anthropic.com',
    basePath: '',
    serves: ['messages'],
    apiKey: 'sk-ant-test',
    ...overrides,
  });
}

/** Client model `client-model` routed to `upstream-model` on testProvider(), no output limit of its own. */
export function testTarget(overrides: Partial<UpstreamTarget> = {}): UpstreamTarget {
  return { provider: testProvider(), upstreamModel: 'upstream-model', clientModel: 'client-model', maxOutputTokens: undefined, ...overrides };
}
