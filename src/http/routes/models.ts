// GET /v1/models and GET /v1/models/{id}: only what the calling key may use (routing/access decides).
import type { FastifyInstance } from 'fastify';
import type { Config, ModelConfig } from '../../config/types.js';
import type { ModelJson, ModelListJson } from '../../operations/json-types.js';
import { findUsableModel, visibleModels } from '../../routing/access.js';

export function modelEntry(model: ModelConfig, config: Config): ModelJson {
  // The first upstream that can be called: the one that serves the model unless it fails.
  const firstProvider = config.providers.get((model.usableUpstreams[0] ?? model.upstreams[0]!).provider);
  return {
    id: model.id,
    object: 'model',
    created: config.loadedAt,
    owned_by: firstProvider?.kind ?? 'tollgate',
    type: model.type,
    context_window: model.contextWindow ?? null,
    max_output_tokens: model.maxOutputTokens ?? null,
    pricing: model.displayPrice,
  };
}

export function registerModelRoutes(app: FastifyInstance, config: Config): void {
  app.get('/models', async function listModels(request, reply) {
    const answer: ModelListJson = { object: 'list', data: visibleModels(config, request.apiKey!.allowedModels).map((model) => modelEntry(model, config)) };
    return reply.type('application/json').send(JSON.stringify(answer));
  });

  // Model IDs may contain slashes ("meta-llama/Llama-3.1-8B"), hence the wildcard.
  app.get('/models/*', async function getModel(request, reply) {
    const id = (request.params as { '*': string })['*'];
    const model = findUsableModel(config, request.apiKey!.allowedModels, id);
    return reply.type('application/json').send(JSON.stringify(modelEntry(model, config)));
  });
}
