// The only place that lists provider kinds. Generic code asks the registry for an adapter by kind
// and never names a provider itself.
import { anthropicAdapter } from './anthropic/index.js';
import { azureOpenAIAdapter } from './azure-openai/index.js';
import { geminiAdapter } from './gemini/index.js';
import { openaiAdapter, openaiCompatibleAdapter } from './openai/index.js';
import type { ProviderAdapter, ProviderKindInfo } from './types.js';

const ADAPTERS: ReadonlyMap<string, ProviderAdapter> = new Map(
  [openaiAdapter, openaiCompatibleAdapter, anthropicAdapter, geminiAdapter, azureOpenAIAdapter].map((adapter) => [adapter.kind, adapter]),
);

export function findProviderKind(kind: string): ProviderKindInfo | undefined {
  return ADAPTERS.get(kind);
}

export function providerKindNames(): string[] {
  return [...ADAPTERS.keys()];
}

/** The adapter for a configured kind (config validation guarantees it exists). */
export function adapterFor(kind: string): ProviderAdapter {
  const adapter = ADAPTERS.get(kind);
  if (!adapter) throw new Error(`no adapter for provider kind ${kind}`);
  return adapter;
}
