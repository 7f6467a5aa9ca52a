// The order in which a request tries its model's upstreams: as configured (`routing: fallback`) or a
// weighted random order (`routing: weighted`, by each upstream's `weight`). Upstreams without
// credentials are no candidates at all (resolve-route.ts). Upstreams cooling down are skipped — unless
// every one is, and then all are tried anyway, the soonest to recover first (panic routing, as Envoy
// does below its panic threshold): a cool-down may reorder or skip upstreams, it never answers for them.
import type { Candidate, Route } from './resolve-route.js';
import type { UpstreamHealth } from './upstream-health.js';

export interface CandidateOrder {
  readonly candidates: readonly Candidate[];
  /** Every usable upstream was cooling down: they are tried anyway, and a cool-down skips none of them. */
  readonly panic: boolean;
}

/** Efraimidis–Spirakis: sorting by u^(1/w) draws a weighted order without replacement. */
function weightedOrder(candidates: readonly Candidate[], random: () => number): Candidate[] {
  return candidates
    .map((candidate) => ({ candidate, key: Math.pow(random(), 1 / candidate.weight) }))
    .sort((a, b) => b.key - a.key)
    .map((entry) => entry.candidate);
}

export function orderCandidates(route: Route, health: UpstreamHealth, random: () => number = Math.random): CandidateOrder {
  const { candidates } = route;
  const ordered = route.model.routing === 'weighted' && candidates.length > 1 ? weightedOrder(candidates, random) : candidates;
  if (!ordered.some((c) => health.isCooling(c.target))) return { candidates: ordered, panic: false };
  const ready = ordered.filter((c) => !health.isCooling(c.target));
  if (ready.length > 0) return { candidates: ready, panic: false };
  // Stable sort: equal remaining times keep the configured (or weighted) order.
  const soonestFirst = [...ordered].sort((a, b) => health.coolingRemainingMs(a.target) - health.coolingRemainingMs(b.target));
  return { candidates: soonestFirst, panic: true };
}
