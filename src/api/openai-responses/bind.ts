// What a Responses request needs once its model is known (the port's `bind`, product.md §14) — where a
// native cell may serve it (a translated cell stores nothing: to-chat/request.ts refuses stored state):
//  - built-in tools run on the upstream's servers and are billed there beyond tokens: refused with a 400
//    naming the tool unless the model sets `allow_server_tools: true`;
//  - a `previous_response_id` or an `item_reference` (or a reasoning item by id alone) names state one
//    upstream account stored: the key
//    must have recorded it (else 404 previous_response_not_found, before any hold or upstream call), the
//    request is pinned to that account (no fallback to another, which would not know the id), and its
//    hold adds the context the id stands for — the response's input and output for a previous response,
//    the output of the response an item came from for an item reference.
import { GatewayError } from '../../errors.js';
import { isJsonObject, type JsonObject } from '../../json-object.js';
import type { ModelConfig } from '../../config/types.js';
import type { Binding } from '../../pipeline/client-api.js';
import type { ClientRequest, PipelineDeps } from '../../pipeline/deps.js';
import type { Route } from '../../routing/resolve-route.js';
import type { StoredResponseRef } from '../../storage/types.js';
import { statefulRefusal } from './to-chat/request.js';
import { responsesCellFor } from './to-chat/index.js';
import type { ResponsesBody } from './validate.js';

/** Built-in tool types that run on the upstream's servers (web_search_preview, web_search_2025_08_26, ... included). */
const SERVER_TOOL = /^(?:web_search|file_search|code_interpreter|image_generation|mcp)(?:$|_)/;
/** More references than any client sends: a bound on what one request makes the gateway look up. */
const MAX_REFERENCES = 1_000;

/** A stored id the request names, and where (for the 404's `param`). */
interface Named {
  readonly id: string;
  readonly param: string;
}

export async function bindResponses(body: ResponsesBody, route: Route, client: ClientRequest, deps: PipelineDeps): Promise<Binding> {
  // Only a native cell can run a built-in tool, or read stored state: where none can serve the request,
  // the translated cell drops the tools (to-chat/tools.ts) and refuses the state, before any lookup.
  if (!route.candidates.some((candidate) => responsesCellFor(candidate) === 'native')) {
    if (typeof body.previous_response_id === 'string') throw statefulRefusal('previous_response_id');
    return { route, contextTokens: 0 };
  }
  refuseServerTools(body, route.model);
  const named = namedIds(body);
  if (named.length === 0) return { route, contextTokens: 0 };
  if (!deps.responseState) throw new GatewayError('internal_error', { cause: new Error('the Responses state store is not configured') });
  const found = await deps.responseState.find(client.key.id, [...new Set(named.map((n) => n.id))], Date.now());
  const refs = new Map(found.map((ref) => [ref.id, ref]));
  for (const { id, param } of named) {
    if (!refs.has(id)) {
      throw new GatewayError('previous_response_not_found', {
        param,
        message: `No stored response or item with id '${id}' was made with this key (or it is older than 30 days).`,
      });
    }
  }
  const providers = new Set(found.map((ref) => ref.provider));
  if (providers.size > 1) {
    throw new GatewayError('invalid_request', {
      param: named[0]!.param,
      message: 'The stored responses this request names were made through different upstream accounts; continue from one of them only.',
    });
  }
  const provider = found[0]!.provider;
  const candidates = route.candidates.filter((candidate) => candidate.provider.id === provider);
  if (candidates.length === 0) {
    throw new GatewayError('invalid_request', {
      param: named[0]!.param,
      message: `The stored response '${named[0]!.id}' was made through an upstream that no longer serves the model '${route.model.id}'.`,
    });
  }
  return { route: { model: route.model, candidates }, contextTokens: contextTokens(body, named, refs) };
}

function refuseServerTools(body: ResponsesBody, model: ModelConfig): void {
  if (model.allowServerTools || !Array.isArray(body.tools)) return;
  body.tools.forEach((tool: unknown, index) => {
    const type = isJsonObject(tool) ? tool.type : undefined;
    if (typeof type === 'string' && SERVER_TOOL.test(type)) {
      throw new GatewayError('unsupported_parameter', {
        param: `tools[${index}].type`,
        message: `The built-in tool '${type}' runs on the upstream's servers and is not enabled for the model '${model.id}' (its operator can set allow_server_tools: true); remove it from 'tools'.`,
      });
    }
  });
}

/** The stored ids the request names: its previous response, then each item reference in order. */
function namedIds(body: ResponsesBody): Named[] {
  const named: Named[] = [];
  if (typeof body.previous_response_id === 'string') named.push({ id: body.previous_response_id, param: 'previous_response_id' });
  if (Array.isArray(body.input)) {
    body.input.forEach((item: unknown, index) => {
      if (isJsonObject(item) && typeof item.id === 'string' && refersToStored(item)) named.push({ id: item.id, param: `input[${index}].id` });
    });
  }
  if (named.length > MAX_REFERENCES) {
    throw new GatewayError('invalid_request', { param: 'input', message: `A request may name at most ${MAX_REFERENCES} stored items; send their content instead.` });
  }
  return named;
}

/**
 * An input item the upstream resolves from what it stored: an `item_reference`, or a reasoning item sent
 * by id without its `encrypted_content` (with `store` on, the upstream reads the stored reasoning) — so a
 * key can only name stored items it made.
 */
function refersToStored(item: JsonObject): boolean {
  return item.type === 'item_reference' || (item.type === 'reasoning' && (item.encrypted_content === undefined || item.encrypted_content === null));
}

/**
 * The context the upstream adds: a previous response's whole input and output (its input already holds
 * the context before it), and for item references the output of each other response they come from.
 */
function contextTokens(body: ResponsesBody, named: readonly Named[], refs: ReadonlyMap<string, StoredResponseRef>): number {
  let tokens = 0;
  const counted = new Set<string>();
  const previous = typeof body.previous_response_id === 'string' ? refs.get(body.previous_response_id) : undefined;
  if (previous) {
    tokens += previous.inputTokens + previous.outputTokens;
    counted.add(previous.responseId);
  }
  for (const { id } of named) {
    const ref = refs.get(id)!;
    if (counted.has(ref.responseId)) continue;
    counted.add(ref.responseId);
    tokens += ref.outputTokens;
  }
  return tokens;
}
