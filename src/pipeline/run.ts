// The one flow every client API's request takes: resolve the model → count and size → quote (a dry run)
// or reserve → attempts (retries, fallback) → answer whole or relay a stream → decide the settlement →
// close the reservation once → report. It knows no client shape: the API behind the ClientApi port does
// the validation, counting, translation and framing. It never throws: it answers with a result and what
// it leaves for the request's outcome.
import { availableToKey } from '../billing/available.js';
import { quoteOf } from '../billing/quote.js';
import type { JsonObject } from '../json-object.js';
import { resolveRoute } from '../routing/resolve-route.js';
import { admit, planFor, sizeHold, type HoldRequest } from './admission/admit.js';
import { routeFor } from './cells.js';
import { withFailover } from './attempts.js';
import { fetchUpstreamJson } from './call-upstream.js';
import type { ApiAnswer, ClientApi } from './client-api.js';
import type { ClientRequest, PipelineDeps, SseSink } from './deps.js';
import { closeAfterFault, closeBeforeOutput, servedBy, type FlowResult, type FlowState } from './flow.js';
import { streamAnswer } from './relay.js';
import { decideSettlement, type SettlementFacts } from './settlement.js';
import { recordStoredIds } from './stored-ids.js';

export async function runRequest<Body extends JsonObject>(
  api: ClientApi<Body>,
  deps: PipelineDeps,
  client: ClientRequest,
  body: Body,
  openSink: () => SseSink,
): Promise<FlowResult> {
  let flow: FlowState<Body> | undefined;
  try {
    const resolved = routeFor(resolveRoute(deps.config, client.key.allowedModels, api.modelOf(body), api.modelType), api, body);
    // State an upstream keeps for the request (a stored response it names) pins it and adds its context.
    const bound = api.bind ? await api.bind(body, resolved, client, deps) : undefined;
    const route = bound?.route ?? resolved;
    const counted = await api.countInput(body, route.model, route);
    const context = bound?.contextTokens ?? 0;
    const budget = api.outputBudget(body, route.model.maxOutputTokens);
    const growing = deps.config.billing.holdMode === 'growing' && budget !== undefined && api.streams(body);
    const hold: HoldRequest =
      typeof counted === 'number'
        ? { route, inputTokens: counted + context, budget, growing }
        : { route, inputTokens: counted.tokens + context, budget, growing, ...(counted.cacheWrite ? { cacheWrite: counted.cacheWrite } : {}) };
    if (client.dryRun) {
      // A quote for a request its upstream could not even take would mislead: the first request is built.
      planFor(deps, client, api, route, body);
      return { ok: true, answer: { kind: 'json', body: quoteOf(sizeHold(deps, hold, budget), availableToKey(client.key)) }, report: {} };
    }
    const admitted = await admit(deps, client, api, hold, body);
    const first = admitted.plan.candidates[0]!;
    flow = { ...admitted, hold, draft: { provider: first.provider.id, upstreamModel: first.target.upstreamModel, attempts: [], firstTokenAt: undefined }, delivered: undefined };
    return api.streams(flow.body) ? await streamAnswer(api, deps, client, flow, openSink) : await wholeAnswer(api, deps, client, flow);
  } catch (error) {
    if (flow && !flow.reservation.isClosed) return closeAfterFault(flow, error);
    return { ok: false, error, report: {} };
  }
}

async function wholeAnswer<Body extends JsonObject>(api: ClientApi<Body>, deps: PipelineDeps, client: ClientRequest, flow: FlowState<Body>): Promise<FlowResult> {
  let answer: ApiAnswer;
  try {
    const served = await withFailover(deps, client, flow.plan, async (candidate) => {
      const { value: json, status } = await fetchUpstreamJson(deps, client, candidate, flow.plan.requestFor(candidate), flow.reservation);
      return { value: api.parseAnswer(json, flow.body, candidate, client.requestId), status };
    });
    servedBy(flow, served.served, served.attempts);
    answer = served.value;
  } catch (error) {
    return closeBeforeOutput(client, flow, error);
  }
  flow.delivered = answer;
  const facts: SettlementFacts = { phase: 'answered', usage: answer.usage?.tokens ?? null, delivered: () => answer.delivered() };
  const charge = await flow.reservation.close(decideSettlement(facts, flow.hold.inputTokens), flow.draft);
  await recordStoredIds(deps, client, flow.draft, charge, answer.stored?.());
  const body = api.answerWith(answer, charge);
  return { ok: true, answer: { kind: 'json', body }, report: { billed: charge.record, ...(deps.config.log.bodies ? { answer: body } : {}) } };
}
