// The operator's accounts (#/accounts, docs/adr/0047-accounts.md): the list with each account's balance,
// held, available, spent, budget and status, its name a link to its own page (#/accounts/<id>); personal
// accounts (one made for each key issued without an account) hidden unless asked for; a new account.
import { useState } from 'preact/hooks';
import { createAccount, listAccounts } from '../accounts-api.js';
import { Pager, nextCursors } from '../components/pager.js';
import { usd } from '../format.js';
import { useLoad } from '../hooks.js';
import { accountHref } from '../route.js';
import type { AccountJson } from '../types.js';
import { CreateAccountDialog } from './account-dialogs.js';

export function budgetText(a: Pick<AccountJson, 'budget' | 'budget_period' | 'budget_used'>): string {
  return a.budget === null ? 'none' : `${usd(a.budget_used)} of ${usd(a.budget)} per ${a.budget_period}`;
}

export function AccountsPage({ token }: { token: string }) {
  const [name, setName] = useState('');
  const [status, setStatus] = useState('');
  const [personal, setPersonal] = useState(false);
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [creating, setCreating] = useState(false);
  const after = cursors[cursors.length - 1];
  const accounts = useLoad(() => listAccounts(token, { name, status, include_personal: personal, after }), [token, name, status, personal, after]);
  const resetPaging = () => setCursors([undefined]);

  return (
    <section class="accounts">
      <div class="toolbar">
        <h2>Accounts</h2>
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
          <option value="suspended">Suspended</option>
        </select>
        <label class="inline">
          <input
            type="checkbox"
            name="include_personal"
            checked={personal}
            onChange={(e) => {
              setPersonal((e.target as HTMLInputElement).checked);
              resetPaging();
            }}
          />
          Personal accounts
        </label>
        <button onClick={() => setCreating(true)} data-action="create-account">
          New account
        </button>
      </div>
      {!personal && <p class="hint">Personal accounts (one for each key issued without an account) are hidden.</p>}
      {accounts.error && (
        <p class="error" role="alert">
          {accounts.error}
        </p>
      )}
      {!accounts.data ? (
        !accounts.error && <p class="loading">Loading…</p>
      ) : accounts.data.data.length === 0 ? (
        <p class="hint">No accounts{name || status ? ' match' : ' yet'}.</p>
      ) : (
        <div class="table-scroll">
          <table class="accounts">
            <thead>
              <tr>
                <th>Name</th>
                <th>Status</th>
                <th class="num">Balance</th>
                <th class="num">Held</th>
                <th class="num">Available</th>
                <th class="num">Spent</th>
                <th>Budget</th>
              </tr>
            </thead>
            <tbody>
              {accounts.data.data.map((a) => (
                <tr key={a.id} data-account={a.id} data-balance={String(a.balance)} data-status={a.status} data-personal={String(a.personal)}>
                  <td title={a.id}>
                    <a href={accountHref(a.id)} data-account-link>
                      {a.name}
                    </a>
                    {a.personal && <span class="badge"> personal</span>}
                  </td>
                  <td>
                    <span class={a.status === 'active' ? 'badge good' : 'badge bad'}>{a.status}</span>
                  </td>
                  <td class="num balance">{usd(a.balance)}</td>
                  <td class="num">{usd(a.held)}</td>
                  <td class="num">{usd(a.available)}</td>
                  <td class="num">{usd(a.spent)}</td>
                  <td>{budgetText(a)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {accounts.data && (
        <Pager
          page={cursors.length - 1}
          hasMore={accounts.data.has_more}
          onNext={() => setCursors(nextCursors(cursors, accounts.data!.next_cursor))}
          onPrevious={() => setCursors(cursors.slice(0, -1))}
        />
      )}
      {creating && (
        <CreateAccountDialog
          onClose={() => setCreating(false)}
          submit={(fields, idempotencyKey) => createAccount(token, fields, idempotencyKey)}
          onDone={(a) => {
            setCreating(false);
            location.hash = accountHref(a.id);
          }}
        />
      )}
    </section>
  );
}
