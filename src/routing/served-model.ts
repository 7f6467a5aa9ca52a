// The prices of the model an upstream says answered a request, when that is not the model it was asked
// for (product.md §14: "a served `model` other than the requested one → that model's prices (unknown:
// the requested model's, never zero)"). A served name is known when a configured chat model calls that
// upstream model on the same provider (config order: the first), else when it is a configured chat
// model's id. A dated or otherwise unknown name (OpenAI answers `gpt-4o-2024-08-06` for `gpt-4o`) is
// unknown: the settlement keeps the requested model's prices.
import type { Config, ModelConfig } from '../config/types.js';

/** The served model's prices, or undefined when they are the requested model's (same model, or unknown). */
export type ServedModelRates = (provider: string, askedUpstreamModel: string, servedModel: string) => ModelConfig['rates'] | undefined;

const resolvers = new WeakMap<Config, ServedModelRates>();

/** The resolver of one loaded config: built once, on first use (the index of upstream models by provider). */
export function servedModelRates(config: Config): ServedModelRates {
  let resolver = resolvers.get(config);
  if (!resolver) {
    const byUpstream = new Map<string, ModelConfig>();
    for (const model of config.models.values()) {
      if (model.type !== 'chat') continue;
      for (const upstream of model.upstreams) {
        const key = `${upstream.provider}\0${upstream.model}`;
        if (!byUpstream.has(key)) byUpstream.set(key, model);
      }
    }
    resolver = (provider, asked, served) => {
      if (served === '' || served === asked) return undefined;
      const model = byUpstream.get(`${provider}\0${served}`) ?? config.models.get(served);
      return model && model.type === 'chat' ? model.rates : undefined;
    };
    resolvers.set(config, resolver);
  }
  return resolver;
}
