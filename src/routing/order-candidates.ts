// The order in which a request tries its model's upstreams: as configured (`routing: fallback`) or a
// weighted random order (`routing: weighted`, by each upstream's `weight`), with upstreams that are
// cooling down or have no credentials left out.
import { GatewayError } from '../errors.js';
import type { ProviderHealth } from './provider-health.js';
import type { Candidate, Route } from './resolve-route.js';

/** Efraimidis–Spirakis: sorting by u^(1/w) draws a weighted order without replacement. */
function weightedOrder(candidates: readonly Candidate[], random: () => number): Candidate[] {
  return candidates
    .map((candidate) => ({ candidate, key: Math.pow(random(), 1 / candidate.weight) }))
    .sort((a, b) => b.key - a.key)
    .map((entry) => entry.candidate);
}

export function orderCandidates(route: Route, health: ProviderHealth, random: () => number = Math.random): Candidate[] {
  const usable = route.candidates.filter((c) => !(c.adapter.apiKeyRequired && c.provider.apiKey === ''));
  if (usable.length === 0) {
    const ids = route.candidates.map((c) => `'${c.provider.id}'`).join(', ');
    throw new GatewayError('upstream_error', { message: `Provider ${ids} has no api_key configured; set it in tollgate.yaml.` });
  }
  const ordered = route.model.routing === 'weighted' ? weightedOrder(usable, random) : usable;
  const ready = ordered.filter((c) => !health.isCooling(c.provider.id));
  if (ready.length > 0) return ready;
  const waitMs = Math.min(...ordered.map((c) => health.coolingRemainingMs(c.provider.id)));
  const retryAfter = String(Math.max(1, Math.ceil(waitMs / 1000)));
  throw new GatewayError('upstream_error', {
    message: `Every upstream of '${route.model.id}' is cooling down after repeated failures; retry in ${retryAfter} s.`,
    headers: { 'retry-after': retryAfter },
  });
}
