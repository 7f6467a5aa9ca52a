// The health of every configured upstream — each (provider, upstream model) pair — as this gateway
// process sees it: cooling down until when, consecutive failures, the last error, and the attempts and
// failed attempts of the last five minutes; and whether it can be called at all (`configured: false`: its
// provider lacks the api_key its kind needs, so routing never tries it — ADR 0029).
import type { Config } from '../config/types.js';
import type { UpstreamHealth } from '../routing/upstream-health.js';
import type { ProviderHealthJson, UpstreamHealthJson } from './json-types.js';

export function providerHealth(config: Config, health: UpstreamHealth, now = Date.now()): ProviderHealthJson {
  // provider id → upstream model → the client model ids it serves, in config order.
  const upstreams = new Map<string, Map<string, string[]>>();
  for (const model of config.models.values()) {
    for (const upstream of model.upstreams) {
      let models = upstreams.get(upstream.provider);
      if (!models) upstreams.set(upstream.provider, (models = new Map()));
      const served = models.get(upstream.model) ?? [];
      if (!served.includes(model.id)) served.push(model.id);
      models.set(upstream.model, served);
    }
  }
  const data: UpstreamHealthJson[] = [];
  for (const [providerId, models] of upstreams) {
    const provider = config.providers.get(providerId)!;
    for (const [upstreamModel, served] of models) {
      const state = health.state({ provider, upstreamModel });
      const cooling = state.coolingUntil > now;
      data.push({
        object: 'upstream',
        provider: providerId,
        kind: provider.kind,
        configured: provider.configured,
        upstream_model: upstreamModel,
        models: served,
        cooling,
        cooling_until: cooling ? new Date(state.coolingUntil).toISOString() : null,
        consecutive_failures: state.consecutiveFailures,
        last_error: state.lastError
          ? { status: state.lastError.status, message: state.lastError.message, at: new Date(state.lastError.at).toISOString() }
          : null,
        requests_5m: state.recentRequests,
        errors_5m: state.recentErrors,
      });
    }
  }
  return { object: 'list', data };
}
