// The one allow-list function: what GET /v1/models lists and what a call may use are both decided here,
// so a model the key may not use answers exactly like a model that does not exist.
import type { Config, ModelConfig } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { AllowedModels } from '../storage/types.js';

export function mayUseModel(allowed: AllowedModels, modelId: string): boolean {
  return allowed === '*' || allowed.includes(modelId);
}

export function visibleModels(config: Config, allowed: AllowedModels): ModelConfig[] {
  const models: ModelConfig[] = [];
  for (const model of config.models.values()) if (mayUseModel(allowed, model.id)) models.push(model);
  return models;
}

/** The model a key may call, or the one 404 body for both "unknown" and "not allowed". */
export function findUsableModel(config: Config, allowed: AllowedModels, modelId: string): ModelConfig {
  const model = config.models.get(modelId);
  if (!model || !mayUseModel(allowed, modelId)) {
    throw new GatewayError('model_not_found', {
      message: `The model '${modelId}' does not exist or you do not have access to it.`,
      param: 'model',
    });
  }
  return model;
}
