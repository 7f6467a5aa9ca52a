// Which upstreams a request will try, in order, and each one's translated request (built once, on
// first use). The first is built before the hold: a request its upstream's API cannot express is a 400
// that costs nothing.
import type { UpstreamRequest } from '../providers/types.js';
import { orderCandidates, type CandidateOrder } from '../routing/order-candidates.js';
import type { Candidate, Route } from '../routing/resolve-route.js';
import { logDropped, type ClientRequest, type PipelineDeps } from './deps.js';

export interface UpstreamPlan extends CandidateOrder {
  requestFor(candidate: Candidate): UpstreamRequest;
}

export function planUpstreams(
  deps: PipelineDeps,
  client: ClientRequest,
  route: Route,
  build: (candidate: Candidate) => UpstreamRequest,
): UpstreamPlan {
  const order = orderCandidates(route, deps.health);
  const built = new Map<Candidate, UpstreamRequest>();
  const requestFor = (candidate: Candidate): UpstreamRequest => {
    let request = built.get(candidate);
    if (!request) {
      request = build(candidate);
      logDropped(deps, client, request);
      built.set(candidate, request);
    }
    return request;
  };
  requestFor(order.candidates[0]!);
  return { candidates: order.candidates, panic: order.panic, requestFor };
}
