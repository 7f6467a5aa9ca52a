// POST /v1/chat/completions: resolve → size the hold → admit → call upstream (with retries and
// fallback) → meter → settle. A dry run stops after sizing (a quote); a clamp turns a 402 that a smaller
// max_tokens would avoid into a call with that max_tokens.
import type { HoldSizing } from '../billing/insufficient-balance.js';
import { resolveMaxOutput, sizeChatHold } from '../billing/pricing.js';
import { quoteOf } from '../billing/quote.js';
import { countChatInput } from '../billing/token-count.js';
import { GatewayError } from '../errors.js';
import type { JsonObject } from '../json-object.js';
import type { ChatRequestBody } from '../providers/types.js';
import { resolveRoute, type Route } from '../routing/resolve-route.js';
import { fetchUpstreamJson } from './call-upstream.js';
import { streamChat } from './chat-stream.js';
import type { ClientRequest, PipelineDeps, SseSink } from './deps.js';
import { withFailover } from './failover.js';
import { OutputGrowth } from './output-growth.js';
import { OutputMeter } from './output-meter.js';
import { RequestBill } from './request-bill.js';
import { admitRate } from './rate-admission.js';
import { planUpstreams, type UpstreamPlan } from './upstream-plan.js';

export type ChatOutcome = { readonly kind: 'json'; readonly body: JsonObject } | { readonly kind: 'streamed' };

export const CLAMPED_HEADER = 'x-tollgate-max-tokens-clamped';

interface Admitted {
  readonly bill: RequestBill;
  readonly plan: UpstreamPlan;
  readonly body: ChatRequestBody;
  readonly maxOutput: number;
}

export async function runChat(
  deps: PipelineDeps,
  client: ClientRequest,
  body: ChatRequestBody,
  openSink: () => SseSink,
): Promise<ChatOutcome> {
  const route = resolveRoute(deps.config, client.key.allowedModels, body.model, 'chat');
  const inputTokens = await countChatInput(body);
  const n = typeof body.n === 'number' ? body.n : 1;
  const growing = deps.config.billing.holdMode === 'growing' && body.stream === true;
  if (client.dryRun) {
    const sizing = sizingOf(route, inputTokens, n, resolveMaxOutput(body, route.model.maxOutputTokens!), growing, deps);
    return { kind: 'json', body: quoteOf(sizing, client.key.balance - client.key.held) };
  }
  const admitted = await admitWithClamp(deps, client, route, body, inputTokens, n, growing);
  const { bill, plan } = admitted;
  try {
    if (body.stream === true) {
      const growth = growing ? new OutputGrowth(bill, route.model.rates, inputTokens, n, deps.config.billing.growingStepTokens, admitted.maxOutput) : undefined;
      await streamChat(deps, client, admitted.body, plan, bill, openSink, growth);
      return { kind: 'streamed' };
    }
    return { kind: 'json', body: await completeChat(deps, client, plan, bill) };
  } finally {
    // A bug must not strand a hold until it expires, nor make an upstream's work free.
    await bill.closeAfterFault(500);
  }
}

/** The hold of a request: input + max output (or, for a growing hold, + its first step). */
function sizingOf(route: Route, inputTokens: number, n: number, maxOutput: number, growing: boolean, deps: PipelineDeps): HoldSizing {
  const model = route.model;
  const heldOutput = growing ? OutputGrowth.initialOutput(deps.config.billing.growingStepTokens, maxOutput) : maxOutput;
  return { rates: model.rates, inputTokens, n, hold: sizeChatHold(model.rates, inputTokens, heldOutput, n), modelMaxOutput: model.maxOutputTokens! };
}

async function admit(deps: PipelineDeps, client: ClientRequest, route: Route, body: ChatRequestBody, inputTokens: number, n: number, growing: boolean): Promise<Admitted> {
  const plan = planUpstreams(deps, client, route, body, (candidate, forwarded) => candidate.adapter.buildChatRequest(forwarded, candidate.target));
  const maxOutput = resolveMaxOutput(body, route.model.maxOutputTokens!);
  const sizing = sizingOf(route, inputTokens, n, maxOutput, growing, deps);
  const rate = await admitRate(deps, client, inputTokens + maxOutput * n);
  const bill = await RequestBill.open(deps, client, route.model, plan.candidates[0]!, sizing, rate);
  return { bill, plan, body, maxOutput };
}

/**
 * Admits the request; with clamp on, a 402 insufficient_balance whose affordable_max_tokens is at least 1
 * becomes one more admission with max_tokens lowered to it (the field the client used, else max_tokens).
 */
async function admitWithClamp(deps: PipelineDeps, client: ClientRequest, route: Route, body: ChatRequestBody, inputTokens: number, n: number, growing: boolean): Promise<Admitted> {
  try {
    return await admit(deps, client, route, body, inputTokens, n, growing);
  } catch (error) {
    const affordable = clampTarget(error, client);
    if (affordable === undefined) throw error;
    const field = typeof body.max_completion_tokens === 'number' ? 'max_completion_tokens' : 'max_tokens';
    const admitted = await admit(deps, client, route, { ...body, [field]: affordable }, inputTokens, n, growing);
    client.setHeader(CLAMPED_HEADER, String(affordable));
    return admitted;
  }
}

function clampTarget(error: unknown, client: ClientRequest): number | undefined {
  if (!client.clamp || !(error instanceof GatewayError) || error.code !== 'insufficient_balance') return undefined;
  const affordable = error.metadata?.affordable_max_tokens;
  return typeof affordable === 'number' && affordable >= 1 ? affordable : undefined;
}

async function completeChat(deps: PipelineDeps, client: ClientRequest, plan: UpstreamPlan, bill: RequestBill): Promise<JsonObject> {
  let parsed;
  try {
    parsed = await withFailover(deps, client, bill, plan, async (candidate) => {
      const json = await fetchUpstreamJson(deps, client, candidate, plan.requestFor(candidate), bill);
      return candidate.adapter.parseChatResponse(json, candidate.target);
    });
  } catch (error) {
    throw await bill.abandon(error);
  }
  const body = parsed.body;
  // Counted only when needed (no usage, or a fault): most answers carry exact usage.
  const outputTokens = () => {
    const meter = new OutputMeter();
    meter.observeCompletion(body);
    return meter.tokens();
  };
  bill.upstreamServed(outputTokens);
  const charge = parsed.usage ? await bill.settleExact(parsed.usage, 200) : await bill.settleEstimated(outputTokens(), 200);
  parsed.body.usage = charge.usage;
  return parsed.body;
}
