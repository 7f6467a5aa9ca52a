// The only place that lists the adapters (translations) of the provider kinds. Generic code asks for an
// adapter by kind and never names a provider itself; what a kind is (defaults, auth, framing) is kinds.ts.
import { anthropicAdapter } from './anthropic/index.js';
import { azureOpenAIAdapter } from './azure-openai/index.js';
import { geminiAdapter } from './gemini/index.js';
import { openaiAdapter, openaiCompatibleAdapter } from './openai/index.js';
import type { ProviderAdapter } from './types.js';

const ADAPTERS: ReadonlyMap<string, ProviderAdapter> = new Map(
  [openaiAdapter, openaiCompatibleAdapter, anthropicAdapter, geminiAdapter, azureOpenAIAdapter].map((adapter) => [adapter.kind, adapter]),
);

/** The adapter for a configured kind (config validation guarantees it exists). */
export function adapterFor(kind: string): ProviderAdapter {
  const adapter = ADAPTERS.get(kind);
  if (!adapter) throw new Error(`no adapter for provider kind ${kind}`);
  return adapter;
}
