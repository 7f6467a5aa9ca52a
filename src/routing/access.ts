// The one allow-list function: what GET /v1/models lists and what a call may use are both decided here,
// so a model the key may not use — or one none of whose upstreams can be called (its providers lack the
// api_key their kind needs, ADR 0029) — answers exactly like a model that does not exist.
import type { Config, ModelConfig } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { AllowedModels } from '../storage/types.js';

/** The model is offered (some upstream of it can be called) and the key's allow-list names it (or is "*"). */
export function mayUseModel(allowed: AllowedModels, model: ModelConfig): boolean {
  return model.usableUpstreams.length > 0 && (allowed === '*' || allowed.includes(model.id));
}

export function visibleModels(config: Config, allowed: AllowedModels): ModelConfig[] {
  const models: ModelConfig[] = [];
  for (const model of config.models.values()) if (mayUseModel(allowed, model)) models.push(model);
  return models;
}

/** The model a key may call, or the one 404 body for "unknown", "not allowed" and "not callable". */
export function findUsableModel(config: Config, allowed: AllowedModels, modelId: string): ModelConfig {
  const model = config.models.get(modelId);
  if (!model || !mayUseModel(allowed, model)) {
    throw new GatewayError('model_not_found', {
      message: `The model '${modelId}' does not exist or you do not have access to it.`,
      param: 'model',
    });
  }
  return model;
}
