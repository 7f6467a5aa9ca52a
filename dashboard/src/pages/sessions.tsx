// Agent sessions (Claude Code, Codex): what each cost. The list (#/sessions) is the usage summary by
// session over the last 30 days, costliest first; a session's own page (#/sessions/<session id>) adds up
// all its requests — cost, requests, tokens, failures, by client API and model — and lists them page by
// page, each opening its request's page. Requests whose client named no session are not listed here.
import { useState } from 'preact/hooks';
import { getAll } from '../api.js';
import { CountFigure, Figure } from '../components/figure.js';
import { Pager, nextCursors } from '../components/pager.js';
import { TotalsTable } from '../components/totals-table.js';
import { UsageTable } from '../components/usage-table.js';
import { count } from '../format.js';
import { useLoad } from '../hooks.js';
import { listAllKeys } from '../keys-api.js';
import { sessionHref } from '../route.js';
import { totals } from '../summary.js';
import type { UsageTotalsJson } from '../types.js';
import { listUsage } from '../usage-api.js';

const PAGE_SIZE = 50;
/** The list shows this many sessions, the costliest. */
const LISTED = 100;
const DAYS = 30;

export function SessionsPage({ token }: { token: string }) {
  const since = new Date(Date.now() - DAYS * 86_400_000).toISOString();
  const sessions = useLoad(() => getAll<UsageTotalsJson>('/admin/v1/usage/summary', token, { group_by: 'session', since }), [token]);
  const named = (sessions.data ?? []).filter((r) => r.group !== null);
  return (
    <section class="sessions-page">
      <h2>Agent sessions</h2>
      <p class="hint">
        Requests that named a session (Claude Code’s <code>x-claude-code-session-id</code>, Codex’s <code>session-id</code>), last {DAYS} days,
        costliest first.
      </p>
      {sessions.error && (
        <p class="error" role="alert">
          {sessions.error}
        </p>
      )}
      {!sessions.data ? (
        !sessions.error && <p class="loading">Loading…</p>
      ) : named.length === 0 ? (
        <p class="hint">No agent sessions yet.</p>
      ) : (
        <>
          {named.length > LISTED && <p class="hint">The {LISTED} costliest of {count(named.length)} sessions.</p>}
          <TotalsTable rows={named.slice(0, LISTED)} label="Session" link={sessionHref} />
        </>
      )}
    </section>
  );
}

export function SessionPage({ token, id }: { token: string; id: string }) {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const after = cursors[cursors.length - 1];
  const filter = { session_id: id };
  const byApi = useLoad(() => getAll<UsageTotalsJson>('/admin/v1/usage/summary', token, { ...filter, group_by: 'endpoint' }), [token, id]);
  const byModel = useLoad(() => getAll<UsageTotalsJson>('/admin/v1/usage/summary', token, { ...filter, group_by: 'model' }), [token, id]);
  const rows = useLoad(() => listUsage(token, { ...filter, limit: PAGE_SIZE, after }), [token, id, after]);
  const keys = useLoad(() => listAllKeys(token), [token]);
  const names = Object.fromEntries((keys.data ?? []).map((k) => [k.id, k.name]));
  const all = byApi.data ? totals(byApi.data) : undefined;
  const error = byApi.error ?? byModel.error ?? rows.error;
  return (
    <section class="session-page" data-session={id}>
      <p>
        <a href="#/sessions">← Sessions</a>
      </p>
      <h2>
        Session <code>{id}</code>
      </h2>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {all && (
        <div class="cards">
          <Figure label="Cost" usd={all.cost} id="session-cost" />
          <CountFigure label="Requests" value={all.requests} id="session-requests" />
          <CountFigure label="Tokens" value={all.tokens} id="session-tokens" />
          <CountFigure label="Failed" value={all.errors} id="session-errors" />
        </div>
      )}
      {all && all.requests === 0 && <p class="hint">No request named this session.</p>}
      {byApi.data && byApi.data.length > 0 && <TotalsTable rows={byApi.data} label="API" />}
      {byModel.data && byModel.data.length > 0 && <TotalsTable rows={byModel.data} label="Model" />}
      <h3>Requests</h3>
      {rows.data && (
        <>
          <UsageTable rows={rows.data.data} showKey keyNames={names} linkRows />
          <Pager
            page={cursors.length - 1}
            hasMore={rows.data.has_more}
            onNext={() => setCursors(nextCursors(cursors, rows.data!.next_cursor))}
            onPrevious={() => setCursors(cursors.slice(0, -1))}
          />
        </>
      )}
    </section>
  );
}
