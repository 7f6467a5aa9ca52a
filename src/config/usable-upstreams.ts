// Which upstreams can be called at all, decided once when the config is loaded (the hot path pays
// nothing): an upstream whose provider lacks the api_key its kind needs is never tried, and a model left
// with none is disabled — not listed, answered as unknown (routing/access.ts). Why: docs/adr/0029.
import type { Logger } from '../log.js';
import type { Config, DisabledModel, ModelConfig, ProviderConfig, UpstreamRef } from './types.js';

/** The upstreams of a model that routing may try, in config order. */
export function usableUpstreams(upstreams: readonly UpstreamRef[], providers: ReadonlyMap<string, ProviderConfig>): readonly UpstreamRef[] {
  return Object.freeze(upstreams.filter((u) => providers.get(u.provider)?.configured === true));
}

/**
 * What to tell the operator, once: each disabled model and why, and each keyless provider that a model
 * still offered skips. `missingKey` maps a keyless provider's id to the reason ("provider openai (kind
 * openai) has no api_key — set OPENAI_API_KEY"); a keyless provider no model uses is not worth a line.
 */
export function keylessNotices(models: Iterable<ModelConfig>, missingKey: ReadonlyMap<string, string>): { disabled: DisabledModel[]; warnings: string[] } {
  const disabled: DisabledModel[] = [];
  const skippedBy = new Map<string, string[]>();
  for (const model of models) {
    const keyless = [...new Set(model.upstreams.map((u) => u.provider).filter((id) => missingKey.has(id)))];
    if (model.usableUpstreams.length === 0) {
      disabled.push(Object.freeze({ model: model.id, reason: keyless.map((id) => missingKey.get(id)!).join('; ') }));
      continue;
    }
    for (const id of keyless) skippedBy.set(id, [...(skippedBy.get(id) ?? []), model.id]);
  }
  const warnings = [...skippedBy].map(([id, ids]) => `${missingKey.get(id)!}; ${ids.length === 1 ? 'model' : 'models'} ${ids.join(', ')} skip it and use only their other upstreams`);
  return { disabled, warnings };
}

/** One disabled model as a sentence: "model gpt-4o-mini disabled: provider openai (kind openai) has no api_key — set OPENAI_API_KEY". */
export function disabledModelLine(disabled: DisabledModel): string {
  return `model ${disabled.model} disabled: ${disabled.reason}`;
}

/**
 * At start-up, once per gateway (by the primary of `serve --workers`, not by each worker): every disabled
 * model in one warn line (its fields list them), then each other warning.
 */
export function logConfigWarnings(config: Config, log: Logger): void {
  if (config.disabledModels.length > 0) log.warn({ disabledModels: config.disabledModels }, config.disabledModels.map(disabledModelLine).join('; '));
  for (const warning of config.warnings) log.warn(warning);
}
