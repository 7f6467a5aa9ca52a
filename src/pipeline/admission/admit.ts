// Admission: the request's upstream plan (its first upstream request is built first — a request that
// upstream's API cannot express is a 400 that costs nothing), its rate limits, then its hold. With a clamp
// (product.md §13), a 402 whose affordable_max_tokens is at least 1 becomes one more admission with the
// output limit lowered to it.
import type { HoldSizing } from '../../billing/insufficient-balance.js';
import { sizeChatHold, type CacheWriteHold } from '../../billing/pricing.js';
import { GatewayError } from '../../errors.js';
import type { JsonObject } from '../../json-object.js';
import type { Route } from '../../routing/resolve-route.js';
import type { ClientApi, OutputBudget } from '../client-api.js';
import type { ClientRequest, PipelineDeps } from '../deps.js';
import { planUpstreams, type UpstreamPlan } from '../upstream-plan.js';
import { OutputGrowth } from './growth.js';
import { admitRate } from './rate.js';
import { Reservation } from './reservation.js';

export const CLAMPED_HEADER = 'x-tollgate-max-tokens-clamped';

/** What a request holds for: its counted input and the output its budget allows. */
export interface HoldRequest {
  readonly route: Route;
  readonly inputTokens: number;
  /** The prompt's cache-write prefix (Anthropic's cache_control), held at its write price; absent: none. */
  readonly cacheWrite?: CacheWriteHold;
  /** Undefined for an API without output (embeddings). */
  readonly budget: OutputBudget | undefined;
  /** A growing hold: it starts at the first step of output (streams only, `billing.hold_mode: growing`). */
  readonly growing: boolean;
}

export interface Admitted<Body extends JsonObject> {
  readonly reservation: Reservation;
  readonly plan: UpstreamPlan;
  /** The body as admitted (a clamp lowered its output limit). */
  readonly body: Body;
  readonly budget: OutputBudget | undefined;
}

/** The hold of a request: input + its output budget (a growing hold: + the first step), at the model's prices. */
export function sizeHold(deps: PipelineDeps, hold: HoldRequest, budget: OutputBudget | undefined): HoldSizing {
  const { model } = hold.route;
  const choices = budget?.choices ?? 1;
  const maxOutput = budget?.maxOutput ?? 0;
  const heldOutput = hold.growing ? OutputGrowth.initialOutput(deps.config.billing.growingStepTokens, maxOutput) : maxOutput;
  return {
    rates: model.rates,
    inputTokens: hold.inputTokens,
    ...(hold.cacheWrite ? { cacheWrite: hold.cacheWrite } : {}),
    n: choices,
    hold: sizeChatHold(model.rates, hold.inputTokens, heldOutput, choices, hold.cacheWrite),
    modelMaxOutput: budget ? model.maxOutputTokens : undefined,
  };
}

export function planFor<Body extends JsonObject>(deps: PipelineDeps, client: ClientRequest, api: ClientApi<Body>, route: Route, body: Body): UpstreamPlan {
  return planUpstreams(deps, client, route, body, (candidate, forwarded) => api.buildRequest(forwarded, candidate, client.headers));
}

async function admitOnce<Body extends JsonObject>(deps: PipelineDeps, client: ClientRequest, api: ClientApi<Body>, hold: HoldRequest, body: Body): Promise<Admitted<Body>> {
  const plan = planFor(deps, client, api, hold.route, body);
  const budget = api.outputBudget(body, hold.route.model.maxOutputTokens);
  const sizing = sizeHold(deps, hold, budget);
  const rate = await admitRate(deps, client, hold.inputTokens + (budget ? budget.maxOutput * budget.choices : 0));
  const reservation = await Reservation.open(deps, client, hold.route.model, sizing, rate);
  return { reservation, plan, body, budget };
}

export async function admit<Body extends JsonObject>(deps: PipelineDeps, client: ClientRequest, api: ClientApi<Body>, hold: HoldRequest, body: Body): Promise<Admitted<Body>> {
  try {
    return await admitOnce(deps, client, api, hold, body);
  } catch (error) {
    const affordable = clampTarget(error, client);
    if (affordable === undefined) throw error;
    const admitted = await admitOnce(deps, client, api, hold, api.withMaxOutput(body, affordable));
    client.setHeader(CLAMPED_HEADER, String(affordable));
    return admitted;
  }
}

function clampTarget(error: unknown, client: ClientRequest): number | undefined {
  if (!client.clamp || !(error instanceof GatewayError) || error.code !== 'insufficient_balance') return undefined;
  const affordable = error.metadata?.affordable_max_tokens;
  return typeof affordable === 'number' && affordable >= 1 ? affordable : undefined;
}
