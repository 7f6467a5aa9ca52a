// An account's keys (the operator's account page, the account token's own view): each key's status, its
// own spend, its credit limit and what is left of it, and what it can still hold of the account's money —
// the key objects' own fields, as the API gives them (`data-*` hold the exact figures).
import type { ComponentChildren } from 'preact';
import { usd } from '../format.js';
import type { AccountKeyJson } from '../types.js';

/** The operator's key objects and the account holder's (the same but the operator's metadata). */
export interface AccountKeysProps<K extends AccountKeyJson> {
  keys: readonly K[];
  /** A key's own page (the operator's view); none: the name is plain text. */
  link?: (id: string) => string;
  /** The actions of an active key's row. */
  actions?: (key: K) => ComponentChildren;
}

export function AccountKeys<K extends AccountKeyJson>({ keys, link, actions }: AccountKeysProps<K>) {
  if (keys.length === 0) return <p class="hint">No keys yet.</p>;
  return (
    <div class="table-scroll">
      <table class="account-keys">
        <thead>
          <tr>
            <th>Name</th>
            <th>Status</th>
            <th class="num">Spent</th>
            <th class="num">Credit limit</th>
            <th class="num">Credit left</th>
            <th class="num">Available</th>
            {actions && (
              <th>
                <span class="hint">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => (
            <tr
              key={k.id}
              data-key={k.id}
              data-status={k.status}
              data-spent={String(k.spent)}
              data-credit-limit={k.credit_limit === null ? '' : String(k.credit_limit)}
              data-credit-left={k.credit_left === null ? '' : String(k.credit_left)}
              data-available={String(k.available)}
            >
              <td title={k.id}>
                {link ? <a href={link(k.id)}>{k.name}</a> : k.name} <code class="hint">{k.prefix}…</code>
              </td>
              <td>
                <span class={k.status === 'active' ? 'badge good' : 'badge bad'}>{k.status}</span>
              </td>
              <td class="num spent">{usd(k.spent)}</td>
              <td class="num credit-limit">{k.credit_limit === null ? 'none' : usd(k.credit_limit)}</td>
              <td class="num credit-left">{usd(k.credit_left)}</td>
              <td class="num available">{usd(k.available)}</td>
              {actions && <td>{k.status === 'active' && actions(k)}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A key's credit limit in a sentence: "$1.50 left of $2.00", or "none". */
export function creditText(k: { credit_limit: number | null; credit_left: number | null }): string {
  return k.credit_limit === null ? 'none' : `${usd(k.credit_left)} left of ${usd(k.credit_limit)}`;
}
