// Which of a model's upstreams a client API can reach (product.md §14, "Cells"): natively (the upstream
// speaks the API) or through a translator. A model with none answers 400 model_not_supported_on_endpoint,
// naming the endpoints it is served on — before any hold or upstream call. A request whose history binds it
// to one cell (signed thinking) keeps to the candidates of that cell when it has any: fallback stays there.
import { GatewayError } from '../errors.js';
import type { JsonObject } from '../json-object.js';
import type { ServedApi } from '../providers/kinds.js';
import type { Route } from '../routing/resolve-route.js';
import type { ClientApi } from './client-api.js';

/** The client path of each API an upstream may serve. */
const PATHS: Readonly<Record<ServedApi, string>> = { chat: '/v1/chat/completions', messages: '/v1/messages', responses: '/v1/responses' };

/** The route with only the candidates `api` can reach for `body`, in their order. */
export function routeFor<Body extends JsonObject>(route: Route, api: Pick<ClientApi<Body>, 'cellFor' | 'historyCell'>, body?: Body): Route {
  const cellFor = api.cellFor?.bind(api);
  if (!cellFor) return route;
  let candidates = route.candidates.filter((candidate) => cellFor(candidate) !== undefined);
  const bound = body === undefined ? undefined : api.historyCell?.(body);
  if (bound !== undefined) {
    const same = candidates.filter((candidate) => cellFor(candidate) === bound);
    if (same.length > 0) candidates = same;
  }
  if (candidates.length === route.candidates.length) return route;
  if (candidates.length > 0) return { model: route.model, candidates };
  const served = [...new Set(route.candidates.flatMap((c) => c.provider.serves))].map((api) => PATHS[api]);
  throw new GatewayError('model_not_supported_on_endpoint', {
    param: 'model',
    message: `The model '${route.model.id}' is not served on this endpoint${served.length > 0 ? `; it is served on ${served.join(', ')}` : ''}.`,
  });
}
