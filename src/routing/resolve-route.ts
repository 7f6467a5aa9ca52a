// Model ID + key → the model and its upstream candidates, in the order to try them.
import type { Config, ModelConfig, ProviderConfig } from '../config/types.js';
import { GatewayError } from '../errors.js';
import { adapterFor } from '../providers/registry.js';
import type { ProviderAdapter, UpstreamTarget } from '../providers/types.js';
import type { AllowedModels } from '../storage/types.js';
import { findUsableModel } from './access.js';

/** An upstream target as routing knows it: with its whole provider config (health, metrics and errors read it). */
export interface RoutedTarget extends UpstreamTarget {
  readonly provider: ProviderConfig;
}

export interface Candidate {
  readonly provider: ProviderConfig;
  readonly adapter: ProviderAdapter;
  readonly target: RoutedTarget;
  /** For `routing: weighted`. */
  readonly weight: number;
}

export interface Route {
  readonly model: ModelConfig;
  readonly candidates: readonly Candidate[];
}

export function resolveRoute(config: Config, allowed: AllowedModels, modelId: string, type: ModelConfig['type']): Route {
  const model = findUsableModel(config, allowed, modelId);
  if (model.type !== type) {
    const endpoint = model.type === 'chat' ? '/v1/chat/completions' : '/v1/embeddings';
    throw new GatewayError('invalid_request', {
      message: `The model '${modelId}' is a${model.type === 'embedding' ? 'n' : ''} ${model.type} model; call it at ${endpoint}.`,
      param: 'model',
    });
  }
  // Only upstreams that can be called: a keyless one is never attempted, so it never counts as a failure.
  const candidates = model.usableUpstreams.map((upstream) => {
    const provider = config.providers.get(upstream.provider)!;
    const adapter = adapterFor(provider.kind);
    return {
      provider,
      adapter,
      weight: upstream.weight,
      target: { provider, upstreamModel: upstream.model, clientModel: model.id, maxOutputTokens: model.maxOutputTokens },
    };
  });
  return { model, candidates };
}
