// POST /v1/chat/completions: resolve → size the hold → admit → call upstream (with retries and
// fallback) → meter → settle.
import { resolveMaxOutput, sizeChatHold } from '../billing/pricing.js';
import { countChatInput } from '../billing/token-count.js';
import type { JsonObject } from '../json-object.js';
import type { ChatRequestBody } from '../providers/types.js';
import { resolveRoute } from '../routing/resolve-route.js';
import { fetchUpstreamJson } from './call-upstream.js';
import { streamChat } from './chat-stream.js';
import type { ClientRequest, PipelineDeps, SseSink } from './deps.js';
import { withFailover } from './failover.js';
import { OutputMeter } from './output-meter.js';
import { RequestBill } from './request-bill.js';
import { admitRate } from './rate-admission.js';
import { planUpstreams, type UpstreamPlan } from './upstream-plan.js';

export type ChatOutcome = { readonly kind: 'json'; readonly body: JsonObject } | { readonly kind: 'streamed' };

export async function runChat(
  deps: PipelineDeps,
  client: ClientRequest,
  body: ChatRequestBody,
  openSink: () => SseSink,
): Promise<ChatOutcome> {
  const route = resolveRoute(deps.config, client.key.allowedModels, body.model, 'chat');
  const plan = planUpstreams(deps, client, route, body, (candidate, forwarded) => candidate.adapter.buildChatRequest(forwarded, candidate.target));
  const model = route.model;
  const inputTokens = await countChatInput(body);
  const modelMaxOutput = model.maxOutputTokens!;
  const n = typeof body.n === 'number' ? body.n : 1;
  const maxOutput = resolveMaxOutput(body, modelMaxOutput);
  const hold = sizeChatHold(model.rates, inputTokens, maxOutput, n);
  const rate = await admitRate(deps, client, inputTokens + maxOutput * n);
  const bill = await RequestBill.open(deps, client, model, plan.candidates[0]!, { rates: model.rates, inputTokens, n, hold, modelMaxOutput }, rate);
  try {
    if (body.stream === true) {
      await streamChat(deps, client, body, plan, bill, openSink);
      return { kind: 'streamed' };
    }
    return { kind: 'json', body: await completeChat(deps, client, plan, bill) };
  } finally {
    // A bug must not strand a hold until it expires, nor make an upstream's work free.
    await bill.closeAfterFault(500);
  }
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
