// The operator's usage table: every request that reached billing, filtered by key, model, provider,
// status and time, paged with the API's cursors, and downloadable as CSV (GET /admin/v1/usage.csv with
// the same filters; the token goes in the Authorization header, never in the URL).
import { useState } from 'preact/hooks';
import { download, getJson, withQuery } from '../api.js';
import { Pager, nextCursors } from '../components/pager.js';
import { UsageTable } from '../components/usage-table.js';
import { count, usd } from '../format.js';
import { useLoad } from '../hooks.js';
import { listAllKeys } from '../keys-api.js';
import type { ListPage, UsageRow } from '../types.js';

const PAGE_SIZE = 50;

interface Filters {
  key_id: string;
  model: string;
  provider: string;
  status: string;
  since: string;
  until: string;
}

const EMPTY: Filters = { key_id: '', model: '', provider: '', status: '', since: '', until: '' };

/** The filters as API query parameters (times from the viewer's zone to ISO). */
function queryOf(f: Filters): Record<string, string> {
  const iso = (v: string) => (v ? new Date(v).toISOString() : '');
  return { key_id: f.key_id, model: f.model.trim(), provider: f.provider.trim(), status: f.status.trim(), since: iso(f.since), until: iso(f.until) };
}

export function UsagePage({ token }: { token: string }) {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [csv, setCsv] = useState<{ busy: boolean; error?: string; bytes?: number }>({ busy: false });
  const after = cursors[cursors.length - 1];
  const keys = useLoad(() => listAllKeys(token), [token]);
  const rows = useLoad(
    () => getJson<ListPage<UsageRow>>(withQuery('/admin/v1/usage', { ...queryOf(filters), limit: PAGE_SIZE, after }), { token }),
    [token, filters, after],
  );
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
          setFilters(draft);
          setCursors([undefined]);
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
        {input('status', 'HTTP status', 'number', 'e.g. 402')}
        {input('since', 'Since', 'datetime-local')}
        {input('until', 'Until', 'datetime-local')}
        <button type="submit">Apply</button>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setDraft(EMPTY);
            setFilters(EMPTY);
            setCursors([undefined]);
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
      {!rows.data ? (
        !rows.error && <p class="loading">Loading…</p>
      ) : (
        <>
          <p class="hint" data-page-rows={rows.data.data.length} data-page-cost={String(pageCostNano / 1e9)}>
            {count(rows.data.data.length)} requests on this page, {usd(pageCostNano / 1e9)} in all.
          </p>
          <UsageTable rows={rows.data.data} showKey keyNames={names} />
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
