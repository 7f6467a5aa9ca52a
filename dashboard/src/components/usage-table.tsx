// Per-request usage rows (§2 shape): time, model, upstream, status, tokens, cost. Used by the operator's
// usage page (with the key column) and the key holder's recent requests.
import { count, time, usd } from '../format.js';
import type { UsageRow } from '../types.js';

export function UsageTable({ rows, showKey = false, keyNames = {} }: { rows: readonly UsageRow[]; showKey?: boolean; keyNames?: Record<string, string> }) {
  if (rows.length === 0) return <p class="hint">No requests yet.</p>;
  return (
    <div class="table-scroll">
      <table class="usage">
        <thead>
          <tr>
            <th>Time</th>
            {showKey && <th>Key</th>}
            <th>Model</th>
            <th>Upstream</th>
            <th class="num">Status</th>
            <th class="num">Input</th>
            <th class="num">Cached</th>
            <th class="num">Output</th>
            <th class="num">Reasoning</th>
            <th class="num">Cost</th>
            <th>Source</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.request_id} data-request={r.request_id} data-cost={String(r.cost)}>
              <td>{time(r.time)}</td>
              {showKey && <td title={r.key_id}>{keyNames[r.key_id] ?? r.key_id}</td>}
              <td>{r.model}</td>
              <td>
                {r.provider}
                <span class="hint"> / {r.upstream_model}</span>
              </td>
              <td class="num">
                <span class={r.status >= 400 ? 'badge bad' : 'badge good'}>{r.status}</span>
              </td>
              <td class="num">{count(r.input_tokens)}</td>
              <td class="num">{count(r.cached_input_tokens)}</td>
              <td class="num">{count(r.output_tokens)}</td>
              <td class="num">{count(r.reasoning_tokens)}</td>
              <td class="num cost">{usd(r.cost)}</td>
              <td>{r.usage_source}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
