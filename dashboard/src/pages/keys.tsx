// The operator's keys: the list with balance, held and available (the key's account's, within the key's
// credit limit), its credit limit, limits and status, each key's name a link to its own page (#/keys/<id>)
// and its account a link to the account's (#/accounts/<id>), and the actions (key-actions.tsx). The table
// fits a 1280 px window.
import { useState } from 'preact/hooks';
import { listAccountNames } from '../accounts-api.js';
import { creditText } from '../components/account-keys.js';
import { Pager, nextCursors } from '../components/pager.js';
import { date, time, usd } from '../format.js';
import { useLoad } from '../hooks.js';
import { listKeys } from '../keys-api.js';
import { accountHref, keyHref } from '../route.js';
import { KeyActionDialogs, KeyActions, limitsText, modelsText, type KeyAction } from './key-actions.js';

export function KeysPage({ token }: { token: string }) {
  const [status, setStatus] = useState('');
  const [name, setName] = useState('');
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [action, setAction] = useState<KeyAction | undefined>();
  const [message, setMessage] = useState<string | undefined>();
  const after = cursors[cursors.length - 1];
  const keys = useLoad(() => listKeys(token, { status, name, after }), [token, status, name, after]);
  const accounts = useLoad(() => listAccountNames(token), [token]);
  const resetPaging = () => setCursors([undefined]);

  return (
    <section class="keys">
      <div class="toolbar">
        <h2>Keys</h2>
        <span class="grow" />
        <input
          aria-label="Name starts with"
          placeholder="Name starts with…"
          value={name}
          onInput={(e) => {
            setName((e.target as HTMLInputElement).value);
            resetPaging();
          }}
        />
        <select
          aria-label="Status"
          value={status}
          onChange={(e) => {
            setStatus((e.target as HTMLSelectElement).value);
            resetPaging();
          }}
        >
          <option value="">All statuses</option>
          <option value="active">Active</option>
          <option value="revoked">Revoked</option>
        </select>
        <button onClick={() => setAction({ kind: 'create' })} data-action="create">
          New key
        </button>
      </div>
      {message && (
        <p class="notice" role="status">
          {message}
        </p>
      )}
      {keys.error && (
        <p class="error" role="alert">
          {keys.error}
        </p>
      )}
      {!keys.data ? (
        !keys.error && <p class="loading">Loading…</p>
      ) : keys.data.data.length === 0 ? (
        <p class="hint">No keys{name || status ? ' match' : ' yet'}.</p>
      ) : (
        <div class="table-scroll">
          <table class="keys">
            <thead>
              <tr>
                <th>Name</th>
                <th>Status</th>
                <th class="num">Balance</th>
                <th class="num">Held</th>
                <th class="num">Available</th>
                <th>Credit limit</th>
                <th>Limits</th>
                <th>Models</th>
                <th>Expires</th>
                <th class="actions">
                  <span class="hint">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.data.data.map((k) => (
                <tr key={k.id} data-key={k.id} data-balance={String(k.balance)} data-status={k.status}>
                  <td class="name wrap" title={k.id}>
                    <a href={keyHref(k.id)} data-key-link>
                      {k.name}
                    </a>
                    <code class="hint">{k.prefix}…</code>
                    <AccountLink id={k.account_id} names={accounts.data} />
                  </td>
                  <td>
                    <span class={k.status === 'active' ? 'badge good' : 'badge bad'}>{k.status}</span>
                  </td>
                  <td class="num balance">{usd(k.balance)}</td>
                  <td class="num">{usd(k.held)}</td>
                  <td class="num">{usd(k.available)}</td>
                  <td class="credit wrap" data-credit-limit={k.credit_limit === null ? '' : String(k.credit_limit)}>
                    {creditText(k)}
                  </td>
                  <td class="limits wrap">{limitsText(k.limits)}</td>
                  <td class="models-cell wrap">{modelsText(k.allowed_models)}</td>
                  <td title={k.expires_at ? time(k.expires_at) : undefined}>{k.expires_at ? date(k.expires_at) : 'never'}</td>
                  <td class="actions">{k.status === 'active' && <KeyActions keyObject={k} onAction={setAction} />}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {keys.data && (
        <Pager
          page={cursors.length - 1}
          hasMore={keys.data.has_more}
          onNext={() => setCursors(nextCursors(cursors, keys.data!.next_cursor))}
          onPrevious={() => setCursors(cursors.slice(0, -1))}
        />
      )}

      <KeyActionDialogs
        token={token}
        action={action}
        setAction={setAction}
        onDone={(text) => {
          setMessage(text);
          keys.reload();
        }}
      />
    </section>
  );
}

/**
 * A key's account, as a link to its page: the shared account's name, or "personal account" for the one
 * made for the key alone (the list of accounts names only the shared ones).
 */
export function AccountLink({ id, names }: { id: string; names: Record<string, string> | undefined }) {
  return (
    <a class="account-link" href={accountHref(id)} data-account-link={id} title={id}>
      {names?.[id] ?? (names ? 'personal account' : 'account')}
    </a>
  );
}
