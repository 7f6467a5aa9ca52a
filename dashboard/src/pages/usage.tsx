// The operator's usage table: every request, filtered by key, model, provider, client API, agent
// session, status (a class — 2xx, errors, 4xx, 5xx — or one code) and time, paged with the API's cursors, each row opening the request's
// own page, and downloadable as CSV (GET /admin/v1/usage.csv with the same filters; the token goes in
// the Authorization header, never in the URL).
import { useState } from 'preact/hooks';
import { download, getAll, withQuery } from '../api.js';
import { requestsText } from '../chart-text.js';
import { CountFigure, Figure } from '../components/figure.js';
import { Pager, nextCursors } from '../components/pager.js';
import { UsageTable } from '../components/usage-table.js';
import { count, usd } from '../format.js';
import { useLoad } from '../hooks.js';
import { listAllKeys } from '../keys-api.js';
import { totals } from '../summary.js';
import type { UsageTotalsJson } from '../types.js';
import { listUsage } from '../usage-api.js';
import { EMPTY_FILTERS, ENDPOINT_CHOICES, STATUS_CHOICES, queryOf, rememberView, rememberedView, type Filters, type UsageView } from '../usage-filters.js';

const PAGE_SIZE = 50;

export function UsagePage({ token }: { token: string }) {
  const [view, setViewState] = useState(rememberedView);
  const [draft, setDraft] = useState<Filters>(view.filters);
  const [csv, setCsv] = useState<{ busy: boolean; error?: string; bytes?: number }>({ busy: false });
  const { filters, cursors } = view;
  const setView = (next: UsageView) => {
    rememberView(next);
    setViewState(next);
  };
  const after = cursors[cursors.length - 1];
  const keys = useLoad(() => listAllKeys(token), [token]);
  const rows = useLoad(() => listUsage(token, { ...queryOf(filters), limit: PAGE_SIZE, after }), [token, filters, after]);
  // The totals of everything the filters match (not just this page), from the summary by day.
  const matching = useLoad(() => getAll<UsageTotalsJson>('/admin/v1/usage/summary', token, { ...queryOf(filters), group_by: 'day' }).then(totals), [token, filters]);
  const names = Object.fromEntries((keys.data ?? []).map((k) => [k.id, k.name]));
  const pageCostNano = (rows.data?.data ?? []).reduce((n, r) => n + Math.round(r.cost * 1e9), 0);

  const input = (name: keyof Filters, label: string, type = 'text', placeholder = '') => (
    <label>
      <span class="hint">{label}</span>
      <input name={name} type={type} placeholder={placeholder} value={draft[name]} onInput={(e) => setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value })} />
    </label>
  );

  async function downloadCsv() {
    setCsv({ busy: true });
    try {
      const bytes = await download(withQuery('/admin/v1/usage.csv', queryOf(filters)), token, `tollgate-usage-${new Date().toISOString().slice(0, 10)}.csv`);
      setCsv({ busy: false, bytes });
    } catch (e) {
      setCsv({ busy: false, error: (e as Error).message });
    }
  }

  return (
    <section class="usage-page">
      <h2>Usage</h2>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setView({ filters: draft, cursors: [undefined] });
        }}
      >
        <label>
          <span class="hint">Key</span>
          <select name="key_id" value={draft.key_id} onChange={(e) => setDraft({ ...draft, key_id: (e.target as HTMLSelectElement).value })}>
            <option value="">All keys</option>
            {(keys.data ?? []).map((k) => (
              <option value={k.id}>{k.name}</option>
            ))}
          </select>
        </label>
        {input('model', 'Model')}
        {input('provider', 'Provider')}
        <label>
          <span class="hint">API</span>
          <select name="endpoint" value={draft.endpoint} onChange={(e) => setDraft({ ...draft, endpoint: (e.target as HTMLSelectElement).value })}>
            {ENDPOINT_CHOICES.map((c) => (
              <option value={c.value}>{c.label}</option>
            ))}
          </select>
        </label>
        {input('session_id', 'Session')}
        <label>
          <span class="hint">Status</span>
          <select name="status" value={draft.status} onChange={(e) => setDraft({ ...draft, status: (e.target as HTMLSelectElement).value })}>
            {STATUS_CHOICES.map((c) => (
              <option value={c.value}>{c.label}</option>
            ))}
          </select>
        </label>
        {draft.status === 'code' && input('code', 'Status code', 'number', 'e.g. 402')}
        {input('since', 'Since', 'datetime-local')}
        {input('until', 'Until', 'datetime-local')}
        <button type="submit">Apply</button>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setDraft(EMPTY_FILTERS);
            setView({ filters: EMPTY_FILTERS, cursors: [undefined] });
          }}
        >
          Clear
        </button>
        <span class="grow" />
        <button type="button" class="secondary" disabled={csv.busy} onClick={downloadCsv} data-action="csv">
          Download CSV
        </button>
      </form>
      {csv.error && (
        <p class="error" role="alert">
          CSV download failed: {csv.error}
        </p>
      )}
      {csv.bytes !== undefined && <p class="hint">CSV downloaded ({count(csv.bytes)} bytes).</p>}
      {rows.error && (
        <p class="error" role="alert">
          {rows.error}
        </p>
      )}
      {matching.data && (
        <div class="cards">
          <Figure label="Spend (all matching)" usd={matching.data.cost} id="matching-spend" />
          <CountFigure label="Requests" value={matching.data.requests} id="matching-requests" />
          <CountFigure label="Tokens" value={matching.data.tokens} id="matching-tokens" />
          <CountFigure label="Failed" value={matching.data.errors} id="matching-errors" />
        </div>
      )}
      {!rows.data ? (
        !rows.error && <p class="loading">Loading…</p>
      ) : (
        <>
          <p class="hint" data-page-rows={rows.data.data.length} data-page-cost={String(pageCostNano / 1e9)}>
            {requestsText(rows.data.data.length)} on this page, {usd(pageCostNano / 1e9)} in all.
          </p>
          <UsageTable rows={rows.data.data} showKey keyNames={names} linkRows />
          <Pager
            page={cursors.length - 1}
            hasMore={rows.data.has_more}
            onNext={() => setView({ filters, cursors: nextCursors(cursors, rows.data!.next_cursor) })}
            onPrevious={() => setView({ filters, cursors: cursors.slice(0, -1) })}
          />
        </>
      )}
    </section>
  );
}
