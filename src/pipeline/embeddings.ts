// POST /v1/embeddings: billed on input tokens only (the hold is the counted input at the input price).
import { sizeEmbeddingHold } from '../billing/pricing.js';
import { quoteOf } from '../billing/quote.js';
import { countEmbeddingInput } from '../billing/token-count.js';
import type { JsonObject } from '../json-object.js';
import type { EmbeddingRequestBody } from '../providers/types.js';
import { resolveRoute } from '../routing/resolve-route.js';
import { fetchUpstreamJson } from './call-upstream.js';
import type { ClientRequest, PipelineDeps } from './deps.js';
import { withFailover } from './failover.js';
import { RequestBill } from './request-bill.js';
import { admitRate } from './rate-admission.js';
import { planUpstreams } from './upstream-plan.js';

export async function runEmbeddings(deps: PipelineDeps, client: ClientRequest, body: EmbeddingRequestBody): Promise<JsonObject> {
  const route = resolveRoute(deps.config, client.key.allowedModels, body.model, 'embedding');
  const plan = planUpstreams(deps, client, route, body, (candidate, forwarded) => candidate.adapter.buildEmbeddingRequest(forwarded, candidate.target));
  const model = route.model;
  const inputTokens = await countEmbeddingInput(body.input);
  const hold = sizeEmbeddingHold(model.rates, inputTokens);
  if (client.dryRun) return quoteOf({ rates: model.rates, inputTokens, n: 1, hold, modelMaxOutput: undefined }, client.key.balance - client.key.held);
  const rate = await admitRate(deps, client, inputTokens);
  const bill = await RequestBill.open(deps, client, model, plan.candidates[0]!, { rates: model.rates, inputTokens, n: 1, hold, modelMaxOutput: undefined }, rate);
  try {
    let parsed;
    try {
      parsed = await withFailover(deps, client, bill, plan, async (candidate) => {
        const json = await fetchUpstreamJson(deps, client, candidate, plan.requestFor(candidate), bill);
        return candidate.adapter.parseEmbeddingResponse(json, body, candidate.target);
      });
    } catch (error) {
      throw await bill.abandon(error);
    }
    bill.upstreamServed(() => 0);
    // Without upstream usage (Gemini reports none) the gateway's own count is billed, marked estimated.
    const charge = parsed.usage ? await bill.settleExact(parsed.usage, 200) : await bill.settleEstimated(0, 200);
    parsed.body.usage = charge.usage;
    return parsed.body;
  } finally {
    await bill.closeAfterFault(500);
  }
}
