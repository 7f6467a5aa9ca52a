// One request's own page (#/usage/<request id>), opened from a usage row or a link: when and for which
// key, the endpoint and model, the outcome (status, error code and message), how long it took (latency,
// time to first token), its tokens by class and cost, and each upstream attempt with its provider,
// status and duration. Fields the row does not carry read "—".
import type { ComponentChildren } from 'preact';
import { getJson } from '../api.js';
import { count, ms, text, time, usd } from '../format.js';
import { useLoad } from '../hooks.js';
import { keyHref, sessionHref } from '../route.js';
import type { KeyJson, UsageJson } from '../types.js';
import { findUsageRow } from '../usage-api.js';

interface RequestData {
  row: UsageJson | undefined;
  /** The key, for its name; undefined when it could not be read. */
  key: KeyJson | undefined;
}

async function loadRequest(token: string, id: string): Promise<RequestData> {
  const row = await findUsageRow(token, id);
  if (!row) return { row, key: undefined };
  const key = await getJson<KeyJson>(`/admin/v1/keys/${encodeURIComponent(row.key_id)}`, { token }).catch(() => undefined);
  return { row, key };
}

const SOURCES: Record<UsageJson['usage_source'], string> = {
  upstream: 'the upstream’s own count',
  estimated: 'estimated (the upstream sent no usage)',
  none: 'none (no upstream answered)',
};

function Fact({ name, label, children }: { name: string; label: string; children: ComponentChildren }) {
  return (
    <>
      <dt>{label}</dt>
      <dd data-field={name}>{children}</dd>
    </>
  );
}

export function RequestPage({ token, id }: { token: string; id: string }) {
  const { data, error } = useLoad(() => loadRequest(token, id), [token, id]);
  return (
    <section class="request-page">
      <p>
        <a href="#/usage">← Usage</a>
      </p>
      <h2>
        Request <code>{id}</code>
      </h2>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : !data ? (
        <p class="loading">Loading…</p>
      ) : !data.row ? (
        <p class="error" role="alert">
          No request has the id “{id}”.
        </p>
      ) : (
        <RequestDetail row={data.row} keyObject={data.key} />
      )}
    </section>
  );
}

function RequestDetail({ row: r, keyObject }: { row: UsageJson; keyObject: KeyJson | undefined }) {
  const failed = r.status >= 400;
  return (
    <div data-request-detail={r.request_id}>
      <dl class="facts">
        <Fact name="time" label="Time">
          {time(r.time)}
        </Fact>
        <Fact name="key" label="Key">
          <a href={keyHref(r.key_id)}>{keyObject?.name ?? r.key_id}</a> <code class="hint">{r.key_id}</code>
        </Fact>
        <Fact name="endpoint" label="Endpoint">
          {text(r.endpoint)}
        </Fact>
        <Fact name="session" label="Agent session">
          {r.session_id === null ? '—' : <a href={sessionHref(r.session_id)}>{r.session_id}</a>}
        </Fact>
        <Fact name="model" label="Model">
          {text(r.model)}
        </Fact>
        <Fact name="upstream" label="Upstream">
          {text(r.provider)}
          {r.upstream_model && <span class="hint"> / {r.upstream_model}</span>}
        </Fact>
        <Fact name="status" label="Status">
          <span class={failed ? 'badge bad' : 'badge good'}>{r.status}</span>
        </Fact>
        <Fact name="error_code" label="Error code">
          {r.error_code ? <code>{r.error_code}</code> : '—'}
        </Fact>
        <Fact name="error_message" label="Error message">
          {text(r.error_message)}
        </Fact>
        <Fact name="duration" label="Latency">
          {ms(r.duration_ms)}
        </Fact>
        <Fact name="first_token" label="Time to first token">
          {ms(r.first_token_ms)}
        </Fact>
        <Fact name="cost" label="Cost">
          <span data-usd={String(r.cost)}>{usd(r.cost)}</span>
        </Fact>
        <Fact name="usage_source" label="Usage">
          {SOURCES[r.usage_source]}
        </Fact>
      </dl>

      <h3>Tokens</h3>
      <div class="table-scroll">
        <table class="tokens">
          <thead>
            <tr>
              <th class="num">Input</th>
              <th class="num">Cached input</th>
              <th class="num">Cache write</th>
              <th class="num">Output</th>
              <th class="num">Reasoning</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <td class="num" data-tokens="input">{count(r.input_tokens)}</td>
              <td class="num" data-tokens="cached_input">{count(r.cached_input_tokens)}</td>
              <td class="num" data-tokens="cache_write">{count(r.cache_write_tokens)}</td>
              <td class="num" data-tokens="output">{count(r.output_tokens)}</td>
              <td class="num" data-tokens="reasoning">{count(r.reasoning_tokens)}</td>
            </tr>
          </tbody>
        </table>
      </div>

      <h3>Attempts</h3>
      {r.attempts.length === 0 ? (
        <p class="hint" data-attempts="0">
          No upstream was called: the gateway answered the request itself.
        </p>
      ) : (
        <div class="table-scroll">
          <table class="attempts" data-attempts={r.attempts.length}>
            <thead>
              <tr>
                <th class="num">#</th>
                <th>Provider</th>
                <th class="num">Status</th>
                <th class="num">Duration</th>
              </tr>
            </thead>
            <tbody>
              {r.attempts.map((a, i) => (
                <tr key={i} data-attempt={i + 1}>
                  <td class="num">{i + 1}</td>
                  <td>{a.provider}</td>
                  <td class="num">
                    <span class={a.status >= 400 ? 'badge bad' : 'badge good'}>{a.status}</span>
                  </td>
                  <td class="num">{ms(a.duration_ms)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
