// GET /v1/models and GET /v1/models/{id}: only what the calling key may use (routing/access decides).
// One body that both the OpenAI and the Anthropic SDKs read (product.md §14): the whole list by default
// (OpenAI's SDK reads one page), or Anthropic's cursor pages over the models in id order when the client
// asks for them with `limit`, `after_id` or `before_id`.
import type { FastifyInstance } from 'fastify';
import type { Config, ModelConfig } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
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
    type: 'model',
    model_type: model.type,
    display_name: model.id,
    created_at: new Date(config.loadedAt * 1000).toISOString(),
    context_window: model.contextWindow ?? null,
    max_output_tokens: model.maxOutputTokens ?? null,
    pricing: model.displayPrice,
  };
}

/** Anthropic's bounds for `limit`. */
const MAX_PAGE = 1000;

interface PageQuery {
  readonly limit: number | undefined;
  readonly afterId: string | undefined;
  readonly beforeId: string | undefined;
}

function invalid(param: string, message: string): never {
  throw new GatewayError('invalid_request', { param, message: `Invalid '${param}': ${message}` });
}

function cursor(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') invalid(name, 'expected one model id');
  return value;
}

/** The paging parameters; any other query parameter (`beta`, `lifecycle`, ...) is ignored. */
function pageQueryOf(query: Record<string, unknown>): PageQuery {
  const raw = query.limit;
  let limit: number | undefined;
  if (raw !== undefined) {
    limit = typeof raw === 'string' && /^\d{1,4}$/.test(raw) ? Number(raw) : NaN;
    if (!(limit >= 1 && limit <= MAX_PAGE)) invalid('limit', `expected an integer from 1 to ${MAX_PAGE}`);
  }
  const afterId = cursor(query, 'after_id');
  const beforeId = cursor(query, 'before_id');
  if (afterId !== undefined && beforeId !== undefined) invalid('before_id', 'give after_id or before_id, not both');
  return { limit, afterId, beforeId };
}

/**
 * A page of `entries` (in id order), as Anthropic pages its model list: after `afterId` the next `limit`
 * ids, before `beforeId` the `limit` ids just before it (a cursor need not name a listed model: ids are
 * compared, so a cursor reveals nothing about models the key may not use). Without `limit`, every model
 * on the cursor's side.
 */
export function modelPage(entries: readonly ModelJson[], query: PageQuery): ModelListJson {
  let from = 0;
  let to = entries.length;
  if (query.afterId !== undefined) from = entries.findIndex((m) => m.id > query.afterId!);
  if (from < 0) from = entries.length;
  if (query.beforeId !== undefined) to = entries.findIndex((m) => m.id >= query.beforeId!);
  if (to < 0) to = entries.length;
  const limit = query.limit ?? entries.length;
  let hasMore: boolean;
  if (query.beforeId !== undefined) {
    hasMore = to - from > limit;
    from = Math.max(from, to - limit);
  } else {
    hasMore = to - from > limit;
    to = Math.min(to, from + limit);
  }
  const data = entries.slice(from, to);
  return { object: 'list', data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null };
}

const byId = (a: ModelJson, b: ModelJson) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export function registerModelRoutes(app: FastifyInstance, config: Config): void {
  app.get('/models', async function listModels(request, reply) {
    const query = pageQueryOf(request.query as Record<string, unknown>);
    const entries = visibleModels(config, request.apiKey!.allowedModels)
      .map((model) => modelEntry(model, config))
      .sort(byId);
    return reply.type('application/json').send(JSON.stringify(modelPage(entries, query)));
  });

  // Model IDs may contain slashes ("meta-llama/Llama-3.1-8B"), hence the wildcard.
  app.get('/models/*', async function getModel(request, reply) {
    const id = (request.params as { '*': string })['*'];
    const model = findUsableModel(config, request.apiKey!.allowedModels, id);
    return reply.type('application/json').send(JSON.stringify(modelEntry(model, config)));
  });
}
