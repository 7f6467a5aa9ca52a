// An allow-list as an operator (or an account token's holder) sends it: configured model ids, or '*'.
import type { Config } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { AllowedModels } from '../storage/types.js';

/** Model ids must be configured ones; '*' allows every model. */
export function allowedModelsOf(models: readonly string[] | '*', config: Config): AllowedModels {
  if (models === '*') return '*';
  const unknown = models.filter((id) => !config.models.has(id));
  if (unknown.length > 0) {
    throw new GatewayError('invalid_request', {
      param: 'allowed_models',
      message: `Unknown model(s) ${unknown.join(', ')}; configured: ${[...config.models.keys()].join(', ')}.`,
    });
  }
  return [...new Set(models)];
}
