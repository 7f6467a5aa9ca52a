// One account's own page (#/accounts/<id>), for the operator: its money (balance, held, available, spent),
// status and budget; top up, adjust, suspend or resume it, issue or rotate its self-service token (shown
// once); its keys with each one's spend, credit limit and what is left of it, spend by key (the usage
// summary for the account, by key), and a new key issued into it with its own credit limit.
import { useState } from 'preact/hooks';
import { accountSummary, adjustAccount, getAccount, issueAccountToken, listAccountKeys, setAccountStatus, topUpAccount } from '../accounts-api.js';
import { AccountKeys } from '../components/account-keys.js';
import { Figure } from '../components/figure.js';
import { TotalsTable } from '../components/totals-table.js';
import { time, usd } from '../format.js';
import { useLoad } from '../hooks.js';
import { keyHref } from '../route.js';
import type { AccountJson } from '../types.js';
import { AccountMoneyDialog } from './account-dialogs.js';
import { budgetText } from './accounts.js';
import { KeyActionDialogs, KeyActions, modelsText, type KeyAction } from './key-actions.js';
import { ConfirmDialog, SecretDialog } from './key-dialogs.js';

type AccountAction =
  | { kind: 'topup' | 'adjust' | 'suspend' | 'resume' | 'token' }
  | { kind: 'token-secret'; token: string | null; title: string };

export function AccountPage({ token, id }: { token: string; id: string }) {
  const [action, setAction] = useState<AccountAction | undefined>();
  const [keyAction, setKeyAction] = useState<KeyAction | undefined>();
  const [message, setMessage] = useState<string | undefined>();
  const account = useLoad(() => getAccount(token, id), [token, id]);
  const keys = useLoad(() => listAccountKeys(token, id), [token, id]);
  const byKey = useLoad(() => accountSummary(token, id, 'key'), [token, id]);
  const reloadAll = () => {
    account.reload();
    keys.reload();
    byKey.reload();
  };
  const done = (text: string, next?: AccountAction) => {
    setAction(next);
    setMessage(text);
    reloadAll();
  };

  const back = (
    <p>
      <a href="#/accounts">← Accounts</a>
    </p>
  );
  if (account.error)
    return (
      <section class="account-page">
        {back}
        <p class="error" role="alert">
          {account.error}
        </p>
      </section>
    );
  if (!account.data) return <p class="loading">Loading…</p>;
  const a = account.data;
  const names = Object.fromEntries((keys.data ?? []).map((k) => [k.id, k.name]));
  const metadata = Object.entries(a.metadata);
  return (
    <section class="account-page" data-account-page={a.id} data-status={a.status}>
      {back}
      <div class="toolbar">
        <h2>{a.name}</h2>
        <span class={a.status === 'active' ? 'badge good' : 'badge bad'}>{a.status}</span>
        {a.personal && <span class="badge">personal</span>}
        <span class="grow" />
        <span class="row-actions">
          <button class="link" data-action="account-topup" onClick={() => setAction({ kind: 'topup' })}>
            Top up
          </button>
          <button class="link" data-action="account-adjust" onClick={() => setAction({ kind: 'adjust' })}>
            Adjust
          </button>
          <button class="link" data-action="account-token" onClick={() => setAction({ kind: 'token' })}>
            {a.token_prefix === null ? 'Issue token' : 'Rotate token'}
          </button>
          {a.status === 'active' ? (
            <button class="link danger" data-action="account-suspend" onClick={() => setAction({ kind: 'suspend' })}>
              Suspend
            </button>
          ) : (
            <button class="link" data-action="account-resume" onClick={() => setAction({ kind: 'resume' })}>
              Resume
            </button>
          )}
        </span>
      </div>
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
      </div>
      <dl class="facts">
        <dt>Id</dt>
        <dd>
          <code>{a.id}</code>
        </dd>
        <dt>Budget</dt>
        <dd data-field="budget">
          {budgetText(a)}
          {a.budget !== null && `, resets ${time(a.budget_resets_at)}`}
        </dd>
        <dt>Self-service token</dt>
        <dd data-field="token">{a.token_prefix === null ? 'none issued' : <code>{a.token_prefix}…</code>}</dd>
        <dt>Models its keys may get</dt>
        <dd data-field="models">{modelsText(a.allowed_models)}</dd>
        <dt>Created</dt>
        <dd>{time(a.created_at)}</dd>
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

      <div class="toolbar">
        <h3>Keys</h3>
        <span class="grow" />
        <button onClick={() => setKeyAction({ kind: 'create', account: { id: a.id, name: a.name } })} data-action="create">
          New key in this account
        </button>
      </div>
      {keys.error ? (
        <p class="error" role="alert">
          {keys.error}
        </p>
      ) : !keys.data ? (
        <p class="loading">Loading…</p>
      ) : (
        <AccountKeys keys={keys.data} link={keyHref} actions={(k) => <KeyActions keyObject={k} onAction={setKeyAction} />} />
      )}

      <h3>Spend by key</h3>
      {byKey.error ? (
        <p class="error" role="alert">
          {byKey.error}
        </p>
      ) : !byKey.data ? (
        <p class="loading">Loading…</p>
      ) : byKey.data.length === 0 ? (
        <p class="hint">No requests yet.</p>
      ) : (
        <TotalsTable rows={byKey.data} label="Key" link={keyHref} names={names} id="by-key" />
      )}

      <AccountDialogs token={token} account={a} action={action} setAction={setAction} done={done} />
      <KeyActionDialogs
        token={token}
        action={keyAction}
        setAction={setKeyAction}
        onDone={(text) => {
          setMessage(text);
          reloadAll();
        }}
      />
    </section>
  );
}

function AccountDialogs({
  token,
  account: a,
  action,
  setAction,
  done,
}: {
  token: string;
  account: AccountJson;
  action: AccountAction | undefined;
  setAction: (action: AccountAction | undefined) => void;
  done: (text: string, next?: AccountAction) => void;
}) {
  const close = () => setAction(undefined);
  switch (action?.kind) {
    case 'topup':
      return (
        <AccountMoneyDialog
          kind="topup"
          account={a}
          onClose={close}
          submit={(amount, note, idem) => topUpAccount(token, a.id, amount, note, idem)}
          onDone={(next) => done(`Topped up ${next.name}: the balance is now ${usd(next.balance)}.`)}
        />
      );
    case 'adjust':
      return (
        <AccountMoneyDialog
          kind="adjust"
          account={a}
          onClose={close}
          submit={(amount, reason, idem) => adjustAccount(token, a.id, amount, reason ?? '', idem)}
          onDone={(next) => done(`Adjusted ${next.name}: the balance is now ${usd(next.balance)}.`)}
        />
      );
    case 'suspend':
    case 'resume': {
      const verb = action.kind;
      return (
        <ConfirmDialog
          id={`account-${verb}`}
          title={`${verb === 'suspend' ? 'Suspend' : 'Resume'} ${a.name}?`}
          text={
            verb === 'suspend'
              ? 'Every key of the account is refused (402 account_suspended) until it is resumed. Its money and keys stay.'
              : 'Its keys may spend its money again.'
          }
          confirmLabel={verb === 'suspend' ? 'Suspend' : 'Resume'}
          danger={verb === 'suspend'}
          onClose={close}
          submit={(idem) => setAccountStatus(token, a.id, verb, idem)}
          onDone={(next) => done(`${next.name} is ${next.status}.`)}
        />
      );
    }
    case 'token':
      return (
        <ConfirmDialog
          id="account-token"
          title={`${a.token_prefix === null ? 'Issue a token for' : 'Rotate the token of'} ${a.name}?`}
          text={
            a.token_prefix === null
              ? 'The token lets its holder see this account and manage its keys on /v1/account and in this dashboard. It is shown once.'
              : 'A new token replaces the old one, which stops working at once. It is shown once.'
          }
          confirmLabel={a.token_prefix === null ? 'Issue token' : 'Rotate token'}
          onClose={close}
          submit={(idem) => issueAccountToken(token, a.id, idem)}
          onDone={(next) => done(`New token for ${next.name}.`, { kind: 'token-secret', token: next.token, title: `Account token: ${next.name}` })}
        />
      );
    case 'token-secret':
      return <SecretDialog title={action.title} secret={action.token} what="token" onClose={close} />;
    default:
      return null;
  }
}
