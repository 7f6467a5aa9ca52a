// The operator's providers: each upstream (provider, upstream model) with its health — cooling down
// until when, consecutive failures, the last error, and its requests and errors in the last 5 minutes.
// A provider without the api_key its kind needs is "not configured": routing never calls it.
import { getJson } from '../api.js';
import { count, time } from '../format.js';
import { useLoad } from '../hooks.js';
import type { ProviderHealthJson, UpstreamHealthJson } from '../types.js';

function lastErrorText(e: UpstreamHealthJson['last_error']): string {
  return e === null ? '—' : `${e.status} ${e.message} (${time(e.at)})`;
}

export function ProvidersPage({ token }: { token: string }) {
  const { data, error, reload } = useLoad(() => getJson<ProviderHealthJson>('/admin/v1/providers', { token }), [token]);
  if (error)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  if (!data) return <p class="loading">Loading…</p>;
  return (
    <section class="providers">
      <div class="toolbar">
        <h2>Providers</h2>
        <span class="grow" />
        <button class="secondary" onClick={reload}>
          Refresh
        </button>
      </div>
      {data.data.length === 0 ? (
        <p class="hint">No upstreams configured.</p>
      ) : (
        <table class="providers">
          <thead>
            <tr>
              <th>Provider</th>
              <th>Upstream model</th>
              <th>Serves</th>
              <th>Health</th>
              <th class="num">Consecutive failures</th>
              <th class="num">Requests (5 min)</th>
              <th class="num">Errors (5 min)</th>
              <th>Last error</th>
            </tr>
          </thead>
          <tbody>
            {data.data.map((u) => {
              const { cooling, configured } = u;
              return (
                <tr
                  key={`${u.provider}/${u.upstream_model}`}
                  data-upstream={`${u.provider}/${u.upstream_model}`}
                  data-cooling={String(cooling)}
                  data-configured={String(configured)}
                >
                  <td>{u.provider}</td>
                  <td>{u.upstream_model}</td>
                  <td>{u.models.join(', ')}</td>
                  <td>
                    {!configured ? (
                      <span class="badge" title="The provider has no api_key: routing never calls it. See tollgate config check.">
                        not configured
                      </span>
                    ) : cooling ? (
                      <span class="badge bad">cooling until {time(u.cooling_until)}</span>
                    ) : (
                      <span class="badge good">healthy</span>
                    )}
                  </td>
                  <td class="num">{count(u.consecutive_failures)}</td>
                  <td class="num">{count(u.requests_5m)}</td>
                  <td class="num">{count(u.errors_5m)}</td>
                  <td class="last-error">{lastErrorText(u.last_error)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
