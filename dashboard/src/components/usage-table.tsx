// Per-request usage rows (§2 shape): time, client API, agent session, model, upstream, status (with the
// error code), latency, tokens, cost. Used by the operator's usage, key and session pages, where each row
// opens the request's own page (#/usage/<request id>) and its session opens the session's page
// (#/sessions/<session id>), and by the key holder's recent requests. Absent fields read "—".
import { count, ms, text, time, usd } from '../format.js';
import { requestHref, sessionHref } from '../route.js';
import type { UsageJson } from '../types.js';

export interface UsageTableProps {
  rows: readonly UsageJson[];
  showKey?: boolean;
  keyNames?: Record<string, string>;
  /** Each row opens its request's page (the operator's view). */
  linkRows?: boolean;
}

/** A click anywhere on a row opens its request; the time cell is the link a keyboard reaches. */
/** A session id is long (a UUID): its start is enough to tell sessions apart in a table; the title has it all. */
function SessionCell({ id, link }: { id: string | null; link: boolean }) {
  if (id === null) return <td>—</td>;
  const short = id.length > 8 ? `${id.slice(0, 8)}…` : id;
  return (
    <td title={id} data-session={id}>
      {link ? <a href={sessionHref(id)}>{short}</a> : short}
    </td>
  );
}

function openRow(event: MouseEvent, requestId: string): void {
  if (!(event.target as Element).closest('a')) location.hash = requestHref(requestId);
}

export function UsageTable({ rows, showKey = false, keyNames = {}, linkRows = false }: UsageTableProps) {
  if (rows.length === 0) return <p class="hint">No requests yet.</p>;
  return (
    <div class="table-scroll">
      <table class={linkRows ? 'usage linked' : 'usage'}>
        <thead>
          <tr>
            <th>Time</th>
            {showKey && <th>Key</th>}
            <th>API</th>
            <th>Session</th>
            <th>Model</th>
            <th>Upstream</th>
            <th class="num">Status</th>
            <th class="num">Latency</th>
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
            <tr
              key={r.request_id}
              data-request={r.request_id}
              data-cost={String(r.cost)}
              data-status={String(r.status)}
              onClick={linkRows ? (e) => openRow(e, r.request_id) : undefined}
            >
              <td>{linkRows ? <a href={requestHref(r.request_id)}>{time(r.time)}</a> : time(r.time)}</td>
              {showKey && <td title={r.key_id}>{keyNames[r.key_id] ?? r.key_id}</td>}
              <td>{text(r.endpoint)}</td>
              <SessionCell id={r.session_id} link={linkRows} />
              <td>{text(r.model)}</td>
              <td>
                {text(r.provider)}
                {r.upstream_model && <span class="hint"> / {r.upstream_model}</span>}
              </td>
              <td class="num">
                <span class={r.status >= 400 ? 'badge bad' : 'badge good'} title={r.error_code ?? undefined}>
                  {r.status}
                </span>
              </td>
              <td class="num">{ms(r.duration_ms)}</td>
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
