// One key's own page (#/keys/<id>), reached from the keys table: the key object (its account's balance and
// held, what the key can still hold, its account and credit limit, limits, status, expiry, models,
// metadata), what it has spent (the usage summary for the
// key), its ledger history page by page (GET /admin/v1/keys/{id}/ledger, newest first), its most recent
// requests, and the same actions as the keys table.
import { useState } from 'preact/hooks';
import { getAccount } from '../accounts-api.js';
import { getAll, getJson, withQuery } from '../api.js';
import { creditText } from '../components/account-keys.js';
import { CountFigure, Figure } from '../components/figure.js';
import { Pager, nextCursors } from '../components/pager.js';
import { UsageTable } from '../components/usage-table.js';
import { time, usd } from '../format.js';
import { useLoad } from '../hooks.js';
import { accountHref, requestHref } from '../route.js';
import { totals } from '../summary.js';
import type { KeyJson, LedgerEntryJson, ListPage, UsageTotalsJson } from '../types.js';
import { listUsage } from '../usage-api.js';
import { EMPTY_FILTERS, rememberView } from '../usage-filters.js';
import { KeyActionDialogs, KeyActions, limitsText, modelsText, type KeyAction } from './key-actions.js';

const LEDGER_PAGE = 20;
const RECENT = 10;

/** How each kind of ledger entry reads, and what its amount did. */
const KINDS: Record<LedgerEntryJson['kind'], { label: string; amount: (usd: number) => string; forRequest: boolean }> = {
  topup: { label: 'Top-up', amount: (v) => `+${usd(v)}`, forRequest: false },
  adjust: { label: 'Adjustment', amount: (v) => (v < 0 ? usd(v) : `+${usd(v)}`), forRequest: false },
  hold: { label: 'Hold', amount: (v) => `${usd(v)} held`, forRequest: true },
  capture: { label: 'Charge', amount: (v) => usd(-v), forRequest: true },
  release: { label: 'Hold released', amount: (v) => `${usd(v)} freed`, forRequest: true },
};

export function KeyPage({ token, id }: { token: string; id: string }) {
  const path = `/admin/v1/keys/${encodeURIComponent(id)}`;
  const [action, setAction] = useState<KeyAction | undefined>();
  const [message, setMessage] = useState<string | undefined>();
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const after = cursors[cursors.length - 1];
  const key = useLoad(() => getJson<KeyJson>(path, { token }), [token, id]);
  // All-time figures: the usage summary of this key (its cost is what the key was charged).
  const spent = useLoad(() => getAll<UsageTotalsJson>('/admin/v1/usage/summary', token, { group_by: 'key', key_id: id }).then(totals), [token, id]);
  const ledger = useLoad(() => getJson<ListPage<LedgerEntryJson>>(withQuery(`${path}/ledger`, { limit: LEDGER_PAGE, after }), { token }), [token, id, after]);
  const recent = useLoad(() => listUsage(token, { key_id: id, limit: RECENT }), [token, id]);
  const accountId = key.data?.account_id;
  const account = useLoad(() => (accountId ? getAccount(token, accountId) : Promise.resolve(undefined)), [token, accountId]);
  const reloadAll = () => {
    key.reload();
    spent.reload();
    ledger.reload();
    recent.reload();
    account.reload();
  };

  if (key.error)
    return (
      <section class="key-page">
        <p>
          <a href="#/keys">← Keys</a>
        </p>
        <p class="error" role="alert">
          {key.error}
        </p>
      </section>
    );
  if (!key.data) return <p class="loading">Loading…</p>;
  const k = key.data;
  const l = k.limits;
  const metadata = Object.entries(k.metadata);
  return (
    <section class="key-page" data-key-page={k.id} data-status={k.status}>
      <p>
        <a href="#/keys">← Keys</a>
      </p>
      <div class="toolbar">
        <h2>{k.name}</h2>
        <span class={k.status === 'active' ? 'badge good' : 'badge bad'}>{k.status}</span>
        <span class="grow" />
        {k.status === 'active' && <KeyActions keyObject={k} onAction={setAction} />}
      </div>
      {message && (
        <p class="notice" role="status">
          {message}
        </p>
      )}
      <div class="cards">
        <Figure label="Balance" usd={k.balance} id="balance" />
        <Figure label="Held" usd={k.held} id="held" />
        <Figure label="Available" usd={k.available} id="available" />
        {k.credit_left !== null && <Figure label="Credit left" usd={k.credit_left} id="credit-left" />}
        {spent.data && <Figure label="Spent (all time)" usd={spent.data.cost} id="spent" />}
        {spent.data && <CountFigure label="Requests" value={spent.data.requests} id="requests" />}
        {spent.data && <CountFigure label="Failed" value={spent.data.errors} id="failed" />}
      </div>
      <dl class="facts">
        <dt>Id</dt>
        <dd>
          <code>{k.id}</code>
        </dd>
        <dt>Secret starts</dt>
        <dd>
          <code>{k.prefix}…</code>
        </dd>
        <dt>Account</dt>
        <dd data-field="account">
          <a href={accountHref(k.account_id)} data-account-link={k.account_id}>
            {account.data?.name ?? k.account_id}
          </a>
          {account.data?.personal && <span class="hint"> (personal: this key's own)</span>}
        </dd>
        <dt>Credit limit</dt>
        <dd data-field="credit-limit">{creditText(k)}</dd>
        <dt>Created</dt>
        <dd>{time(k.created_at)}</dd>
        <dt>Expires</dt>
        <dd data-field="expires">{k.expires_at ? time(k.expires_at) : 'never'}</dd>
        <dt>Limits</dt>
        <dd data-field="limits">{limitsText(l)}</dd>
        {l.budget !== null && (
          <>
            <dt>Budget</dt>
            <dd data-field="budget">
              {usd(k.budget_used)} of {usd(l.budget)} used this {l.budget_period}, resets {time(k.budget_resets_at)}
            </dd>
          </>
        )}
        <dt>Models</dt>
        <dd data-field="models">{modelsText(k.allowed_models)}</dd>
        <dt>Unaffordable max_tokens</dt>
        <dd>{k.clamp_max_tokens ? 'lowered to what the balance covers' : 'refused (402)'}</dd>
        <dt>Metadata</dt>
        <dd data-field="metadata">
          {metadata.length === 0
            ? 'none'
            : metadata.map(([name, value]) => (
                <span class="meta">
                  <code>{name}</code>: {value}
                </span>
              ))}
        </dd>
      </dl>

      <h3>Ledger</h3>
      {ledger.error ? (
        <p class="error" role="alert">
          {ledger.error}
        </p>
      ) : !ledger.data ? (
        <p class="loading">Loading…</p>
      ) : (
        <>
          <LedgerTable entries={ledger.data.data} />
          <Pager
            page={cursors.length - 1}
            hasMore={ledger.data.has_more}
            onNext={() => setCursors(nextCursors(cursors, ledger.data!.next_cursor))}
            onPrevious={() => setCursors(cursors.slice(0, -1))}
          />
        </>
      )}

      <div class="toolbar">
        <h3>Recent requests</h3>
        <span class="grow" />
        <a href="#/usage" data-all-requests onClick={() => rememberView({ filters: { ...EMPTY_FILTERS, key_id: k.id }, cursors: [undefined] })}>
          All requests of this key →
        </a>
      </div>
      {recent.error ? (
        <p class="error" role="alert">
          {recent.error}
        </p>
      ) : !recent.data ? (
        <p class="loading">Loading…</p>
      ) : (
        <UsageTable rows={recent.data.data} linkRows />
      )}

      <KeyActionDialogs
        token={token}
        action={action}
        setAction={setAction}
        onDone={(text) => {
          setMessage(text);
          setCursors([undefined]);
          reloadAll();
        }}
      />
    </section>
  );
}

function LedgerTable({ entries }: { entries: readonly LedgerEntryJson[] }) {
  if (entries.length === 0) return <p class="hint">No ledger entries yet.</p>;
  return (
    <div class="table-scroll">
      <table class="ledger">
        <thead>
          <tr>
            <th>Time</th>
            <th>Kind</th>
            <th class="num">Amount</th>
            <th>Request</th>
            <th>Note</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((e) => {
            const kind = KINDS[e.kind];
            return (
              <tr key={String(e.id)} data-entry={String(e.id)} data-kind={e.kind} data-amount={String(e.amount)}>
                <td>{time(e.created_at)}</td>
                <td>{kind.label}</td>
                <td class="num">{kind.amount(e.amount)}</td>
                <td>{kind.forRequest ? <a href={requestHref(e.request_id)}>{e.request_id}</a> : <code class="hint">{e.request_id}</code>}</td>
                <td class="wrap">{e.note ?? ''}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
