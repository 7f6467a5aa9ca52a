// Which upstreams a request will try, in order, and each one's translated request (built once, on
// first use, from the client body less the provider's strip_fields). The first is built before the
// hold: a request its upstream's API cannot express is a 400 that costs nothing.
import type { UpstreamRequest } from '../providers/types.js';
import { orderCandidates, type CandidateOrder } from '../routing/order-candidates.js';
import type { Candidate, Route } from '../routing/resolve-route.js';
import { logDropped, type ClientRequest, type PipelineDeps } from './deps.js';
import { stripFields } from './strip-fields.js';

export interface UpstreamPlan extends CandidateOrder {
  requestFor(candidate: Candidate): UpstreamRequest;
}

export function planUpstreams<B extends object>(
  deps: PipelineDeps,
  client: ClientRequest,
  route: Route,
  body: B,
  build: (candidate: Candidate, body: B) => UpstreamRequest,
): UpstreamPlan {
  const order = orderCandidates(route, deps.health);
  const built = new Map<Candidate, UpstreamRequest>();
  const requestFor = (candidate: Candidate): UpstreamRequest => {
    let request = built.get(candidate);
    if (!request) {
      const forwarded = stripFields(body, candidate.provider.stripFields);
      if (forwarded.stripped.length > 0) {
        deps.log.debug({ requestId: client.requestId, provider: candidate.provider.id, stripped: forwarded.stripped }, 'credential and endpoint fields were stripped');
      }
      request = build(candidate, forwarded.body);
      logDropped(deps, client, request);
      built.set(candidate, request);
    }
    return request;
  };
  requestFor(order.candidates[0]!);
  return { candidates: order.candidates, panic: order.panic, requestFor };
}
