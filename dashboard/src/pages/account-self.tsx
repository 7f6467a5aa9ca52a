// The account token holder's view (signed in with tga-…; docs/adr/0047-accounts.md): the account's money
// (balance, held, available, spent) and budget, its keys with each one's cap and spend, spend by key and
// by model, and the holder's own key actions — create a key (its secret shown once), cap it (a credit
// limit), revoke it; redeem a code (docs/adr/0051-redemption-codes.md) — all through /v1/account. The server bounds what a key may get (the operator's
// allowed models and limits); a refusal shows its own message.
import { useState } from 'preact/hooks';
import { newIdempotencyKey } from '../api.js';
import { capOwnKey, createOwnKey, getOwnAccount, listOwnKeys, ownSummary, revokeOwnKey, type OwnKeyFields } from '../account-self-api.js';
import { AccountKeys } from '../components/account-keys.js';
import { RedeemForm } from '../components/redeem-form.js';
import { CountFigure, Figure } from '../components/figure.js';
import { Modal } from '../components/modal.js';
import { TotalsTable } from '../components/totals-table.js';
import { time, usd } from '../format.js';
import { useLoad } from '../hooks.js';
import type { AccountKeyJson, IssuedAccountKeyJson } from '../types.js';
import { budgetText } from './accounts.js';
import { modelsText } from './key-actions.js';
import { AddCredit } from './add-credit.js';
import { ConfirmDialog, ErrorLine, SecretDialog, useAction } from './key-dialogs.js';

type SelfAction = { kind: 'create' } | { kind: 'cap' | 'revoke'; key: AccountKeyJson } | { kind: 'secret'; secret: string | null; title: string };

export function AccountSelfPage({ token }: { token: string }) {
  const [action, setAction] = useState<SelfAction | undefined>();
  const [message, setMessage] = useState<string | undefined>();
  const account = useLoad(() => getOwnAccount(token), [token]);
  const keys = useLoad(() => listOwnKeys(token), [token]);
  const byKey = useLoad(() => ownSummary(token, 'key'), [token]);
  const byModel = useLoad(() => ownSummary(token, 'model'), [token]);
  const done = (text: string, next?: SelfAction) => {
    setAction(next);
    setMessage(text);
    account.reload();
    keys.reload();
    byKey.reload();
    byModel.reload();
  };

  if (account.error)
    return (
      <p class="error" role="alert">
        {account.error}
      </p>
    );
  if (!account.data) return <p class="loading">Loading…</p>;
  const a = account.data;
  const names = Object.fromEntries((keys.data ?? []).map((k) => [k.id, k.name]));
  const close = () => setAction(undefined);
  const error = keys.error ?? byKey.error ?? byModel.error;
  return (
    <section class="account-self" data-account={a.id} data-status={a.status}>
      <div class="toolbar">
        <h2>{a.name}</h2>
        <span class={a.status === 'active' ? 'badge good' : 'badge bad'}>{a.status}</span>
        <span class="grow" />
        <AddCredit token={token} />
      </div>
      {a.status === 'suspended' && (
        <p class="error" role="alert">
          This account is suspended: its keys are refused until the operator resumes it.
        </p>
      )}
      {message && (
        <p class="notice" role="status">
          {message}
        </p>
      )}
      <div class="cards">
        <Figure label="Balance" usd={a.balance} id="balance" />
        <Figure label="Held" usd={a.held} id="held" />
        <Figure label="Available" usd={a.available} id="available" />
        <Figure label="Spent" usd={a.spent} id="spent" />
        <CountFigure label="Requests" value={a.totals.requests} id="requests" />
        <CountFigure label="Active keys" value={a.totals.keys_active} id="keys-active" />
      </div>
      <RedeemForm token={token} onRedeemed={() => account.reload()} />
      <dl class="facts">
        <dt>Budget</dt>
        <dd data-field="budget">
          {budgetText(a)}
          {a.budget !== null && `, resets ${time(a.budget_resets_at)}`}
        </dd>
        <dt>Models your keys may get</dt>
        <dd data-field="models">{modelsText(a.allowed_models)}</dd>
      </dl>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}

      <div class="toolbar">
        <h3>Keys</h3>
        <span class="grow" />
        <button onClick={() => setAction({ kind: 'create' })} data-action="create">
          New key
        </button>
      </div>
      {keys.data ? (
        <AccountKeys
          keys={keys.data}
          actions={(k) => (
            <span class="row-actions">
              <button class="link" data-action="cap" onClick={() => setAction({ kind: 'cap', key: k })}>
                Cap
              </button>
              <button class="link danger" data-action="revoke" onClick={() => setAction({ kind: 'revoke', key: k })}>
                Revoke
              </button>
            </span>
          )}
        />
      ) : (
        !keys.error && <p class="loading">Loading…</p>
      )}

      <div class="columns">
        <div>
          <h3>Spend by key</h3>
          {byKey.data && (byKey.data.length === 0 ? <p class="hint">No requests yet.</p> : <TotalsTable rows={byKey.data} label="Key" names={names} id="by-key" />)}
        </div>
        <div>
          <h3>Spend by model</h3>
          {byModel.data && (byModel.data.length === 0 ? <p class="hint">No requests yet.</p> : <TotalsTable rows={byModel.data} label="Model" id="by-model" />)}
        </div>
      </div>

      {action?.kind === 'create' && (
        <CreateOwnKeyDialog
          onClose={close}
          submit={(fields, idem) => createOwnKey(token, fields, idem)}
          onDone={(k) => done(`Created ${k.name}.`, { kind: 'secret', secret: k.key, title: `New key: ${k.name}` })}
        />
      )}
      {action?.kind === 'cap' && <CapDialog target={action.key} onClose={close} submit={(limit) => capOwnKey(token, action.key.id, limit)} onDone={(k) => done(`Capped ${k.name}.`)} />}
      {action?.kind === 'revoke' && (
        <ConfirmDialog
          id="revoke"
          title={`Revoke ${action.key.name}?`}
          text="The key stops working at once. What it spent stays on the account."
          confirmLabel="Revoke"
          danger
          onClose={close}
          submit={(idem) => revokeOwnKey(token, action.key.id, idem)}
          onDone={(k) => done(`Revoked ${k.name}.`)}
        />
      )}
      {action?.kind === 'secret' && <SecretDialog title={action.title} secret={action.secret} onClose={close} />}
    </section>
  );
}

const inputOf = (set: (value: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value);

function CreateOwnKeyDialog({
  onClose,
  submit,
  onDone,
}: {
  onClose: () => void;
  submit: (fields: OwnKeyFields, idempotencyKey: string) => Promise<IssuedAccountKeyJson>;
  onDone: (key: IssuedAccountKeyJson) => void;
}) {
  const [idempotencyKeys] = useState(() => new Map<string, string>());
  const [name, setName] = useState('');
  const [limit, setLimit] = useState('');
  const [budget, setBudget] = useState('');
  const [period, setPeriod] = useState<'day' | 'week' | 'month'>('month');
  const { busy, error, run } = useAction(onDone);
  return (
    <Modal id="create" title="New key" onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          // Money as typed: the server reads it exactly and names what is wrong with it.
          const fields: OwnKeyFields = { name: name.trim() };
          if (limit.trim() !== '') fields.credit_limit = limit.trim();
          if (budget.trim() !== '') {
            fields.budget = budget.trim();
            fields.budget_period = period;
          }
          const body = JSON.stringify(fields);
          const idem = idempotencyKeys.get(body) ?? idempotencyKeys.set(body, newIdempotencyKey()).get(body)!;
          void run(() => submit(fields, idem));
        }}
      >
        <label for="key-name">Name</label>
        <input id="key-name" name="name" required autocomplete="off" value={name} onInput={inputOf(setName)} />
        <label for="key-credit_limit">Credit limit (USD, empty: none)</label>
        <input id="key-credit_limit" name="credit_limit" inputMode="decimal" placeholder="none" value={limit} onInput={inputOf(setLimit)} />
        <div class="grid2">
          <label for="key-budget">Budget (USD, empty: none)</label>
          <input id="key-budget" name="budget" inputMode="decimal" value={budget} onInput={inputOf(setBudget)} />
          <label for="key-budget_period">Budget period</label>
          <select id="key-budget_period" name="budget_period" value={period} onChange={(e) => setPeriod((e.target as HTMLSelectElement).value as typeof period)}>
            <option value="day">day</option>
            <option value="week">week</option>
            <option value="month">month</option>
          </select>
        </div>
        <div class="toolbar">
          <button type="submit" disabled={busy || name.trim() === ''}>
            Create key
          </button>
          <button type="button" class="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
      <ErrorLine error={error} />
    </Modal>
  );
}

function CapDialog({
  target,
  onClose,
  submit,
  onDone,
}: {
  target: AccountKeyJson;
  onClose: () => void;
  submit: (creditLimit: string | null) => Promise<AccountKeyJson>;
  onDone: (key: AccountKeyJson) => void;
}) {
  const [limit, setLimit] = useState(target.credit_limit === null ? '' : String(target.credit_limit));
  const { busy, error, run } = useAction(onDone);
  return (
    <Modal id="cap" title={`Cap ${target.name}`} onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run(() => submit(limit.trim() === '' ? null : limit.trim()));
        }}
      >
        <p class="hint">
          Spent so far {usd(target.spent)}. The key may spend up to its credit limit in all, within the account's money.
        </p>
        <label for="cap-credit_limit">Credit limit (USD, empty: none)</label>
        <input id="cap-credit_limit" name="credit_limit" inputMode="decimal" placeholder="none" value={limit} onInput={inputOf(setLimit)} />
        <div class="toolbar">
          <button type="submit" disabled={busy}>
            Save
          </button>
          <button type="button" class="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
      <ErrorLine error={error} />
    </Modal>
  );
}
