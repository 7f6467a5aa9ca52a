// The operator's keys: the list with balance, held, available, limits and status, and the actions —
// create (the secret shown once), top up, edit limits and models, revoke, rotate.
import { useState } from 'preact/hooks';
import { getJson, newIdempotencyKey } from '../api.js';
import { Pager, nextCursors } from '../components/pager.js';
import { count, time, usd } from '../format.js';
import { useLoad } from '../hooks.js';
import { createKey, listKeys, revokeKey, rotateKey, topUpKey, updateKey } from '../keys-api.js';
import type { KeyObject, Limits, ListPage, UpstreamHealth } from '../types.js';
import { ConfirmDialog, CreateDialog, EditDialog, SecretDialog, TopUpDialog } from './key-dialogs.js';

type Action = { kind: 'create' } | { kind: 'topup' | 'edit' | 'revoke' | 'rotate'; key: KeyObject } | { kind: 'secret'; key: KeyObject; secret: string; title: string };

export function limitsText(l: Limits): string {
  const parts: string[] = [];
  if (l.rpm !== null) parts.push(`${count(l.rpm)} rpm`);
  if (l.tpm !== null) parts.push(`${count(l.tpm)} tpm`);
  if (l.max_concurrent !== null) parts.push(`${l.max_concurrent} at once`);
  if (l.budget !== null) parts.push(`${usd(l.budget)}/${l.budget_period}`);
  return parts.join(', ') || 'none';
}

export function KeysPage({ token }: { token: string }) {
  const [status, setStatus] = useState('');
  const [name, setName] = useState('');
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [action, setAction] = useState<Action | undefined>();
  const [message, setMessage] = useState<string | undefined>();
  const after = cursors[cursors.length - 1];
  const keys = useLoad(() => listKeys(token, { status, name, after }), [token, status, name, after]);
  // Model IDs to suggest in the forms: every model a configured upstream serves (the others are not offered).
  const models = useLoad(
    () =>
      getJson<ListPage<UpstreamHealth>>('/admin/v1/providers', { token }).then((p) => [...new Set(p.data.filter((u) => u.configured !== false).flatMap((u) => u.models ?? []))].sort()),
    [token],
  );

  const done = (text: string, next?: Action) => {
    setMessage(text);
    setAction(next);
    keys.reload();
  };
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
        <table class="keys">
          <thead>
            <tr>
              <th>Name</th>
              <th>Key</th>
              <th>Status</th>
              <th class="num">Balance</th>
              <th class="num">Held</th>
              <th class="num">Available</th>
              <th>Limits</th>
              <th>Models</th>
              <th>Expires</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {keys.data.data.map((k) => (
              <tr key={k.id} data-key={k.id} data-balance={String(k.balance)} data-status={k.status}>
                <td title={k.id}>{k.name}</td>
                <td>
                  <code>{k.prefix}…</code>
                </td>
                <td>
                  <span class={k.status === 'active' ? 'badge good' : 'badge bad'}>{k.status}</span>
                </td>
                <td class="num balance">{usd(k.balance)}</td>
                <td class="num">{usd(k.held)}</td>
                <td class="num">{usd(k.available)}</td>
                <td>{limitsText(k.limits)}</td>
                <td class="models-cell">{k.allowed_models === '*' ? 'all' : k.allowed_models.join(', ') || 'none'}</td>
                <td>{k.expires_at ? time(k.expires_at) : 'never'}</td>
                <td class="actions">
                  {k.status === 'active' && (
                    <span class="row-actions">
                      <button class="link" data-action="topup" onClick={() => setAction({ kind: 'topup', key: k })}>
                        Top up
                      </button>
                      <button class="link" data-action="edit" onClick={() => setAction({ kind: 'edit', key: k })}>
                        Edit
                      </button>
                      <button class="link" data-action="rotate" onClick={() => setAction({ kind: 'rotate', key: k })}>
                        Rotate
                      </button>
                      <button class="link danger" data-action="revoke" onClick={() => setAction({ kind: 'revoke', key: k })}>
                        Revoke
                      </button>
                    </span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {keys.data && (
        <Pager
          page={cursors.length - 1}
          hasMore={keys.data.has_more}
          onNext={() => setCursors(nextCursors(cursors, keys.data!.next_cursor))}
          onPrevious={() => setCursors(cursors.slice(0, -1))}
        />
      )}

      {action?.kind === 'create' && (
        <CreateDialog
          suggestions={models.data ?? []}
          onClose={() => setAction(undefined)}
          submit={(values) => createKey(token, values, newIdempotencyKey())}
          onDone={(k) => done(`Created ${k.name}.`, { kind: 'secret', key: k, secret: k.key ?? '', title: `New key: ${k.name}` })}
        />
      )}
      {action?.kind === 'edit' && (
        <EditDialog
          editing={action.key}
          suggestions={models.data ?? []}
          onClose={() => setAction(undefined)}
          submit={(values) => updateKey(token, action.key.id, values)}
          onDone={(k) => done(`Saved ${k.name}.`)}
        />
      )}
      {action?.kind === 'topup' && (
        <TopUpDialog
          target={action.key}
          onClose={() => setAction(undefined)}
          submit={(amount, note, idem) => topUpKey(token, action.key.id, amount, note, idem)}
          onDone={(k) => done(`Topped up ${k.name}: the balance is now ${usd(k.balance)}.`)}
        />
      )}
      {action?.kind === 'revoke' && (
        <ConfirmDialog
          id="revoke"
          title={`Revoke ${action.key.name}?`}
          text="The key stops working at once. Its balance and history stay."
          confirmLabel="Revoke"
          danger
          onClose={() => setAction(undefined)}
          submit={(idem) => revokeKey(token, action.key.id, idem)}
          onDone={(k) => done(`Revoked ${k.name}.`)}
        />
      )}
      {action?.kind === 'rotate' && (
        <ConfirmDialog
          id="rotate"
          title={`Rotate ${action.key.name}?`}
          text="A new secret replaces the old one, which stops working at once. The balance and history stay."
          confirmLabel="Rotate"
          onClose={() => setAction(undefined)}
          submit={(idem) => rotateKey(token, action.key.id, idem)}
          onDone={(k) => done(`Rotated ${k.name}.`, { kind: 'secret', key: k, secret: k.key ?? '', title: `New secret for ${k.name}` })}
        />
      )}
      {action?.kind === 'secret' && <SecretDialog title={action.title} secret={action.secret} onClose={() => setAction(undefined)} />}
    </section>
  );
}
