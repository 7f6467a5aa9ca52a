// What an operator does to a key — create (the secret shown once), top up, edit limits and models,
// revoke, rotate — from the keys list or a key's own page: the row of buttons, and the dialog the
// chosen action opens.
import { getJson } from '../api.js';
import { count, usd } from '../format.js';
import { useLoad } from '../hooks.js';
import { createKey, revokeKey, rotateKey, topUpKey, updateKey } from '../keys-api.js';
import type { KeyJson, LimitsJson, ProviderHealthJson } from '../types.js';
import { ConfirmDialog, CreateDialog, EditDialog, SecretDialog, TopUpDialog } from './key-dialogs.js';

export type KeyAction =
  /** With `account`: a key into that account (no balance of its own); without: a key with a personal account. */
  | { kind: 'create'; account?: { id: string; name: string } }
  | { kind: 'topup' | 'edit' | 'revoke' | 'rotate'; key: KeyJson }
  | { kind: 'secret'; key: KeyJson; secret: string | null; title: string };

export function limitsText(l: LimitsJson): string {
  const parts: string[] = [];
  if (l.rpm !== null) parts.push(`${count(l.rpm)} rpm`);
  if (l.tpm !== null) parts.push(`${count(l.tpm)} tpm`);
  if (l.max_concurrent !== null) parts.push(`${l.max_concurrent} at once`);
  if (l.budget !== null) parts.push(`${usd(l.budget)}/${l.budget_period}`);
  return parts.join(', ') || 'none';
}

export const modelsText = (models: KeyJson['allowed_models']): string => (models === '*' ? 'all' : models.join(', ') || 'none');

/** The buttons for an active key's actions. */
export function KeyActions({ keyObject: k, onAction }: { keyObject: KeyJson; onAction: (action: KeyAction) => void }) {
  return (
    <span class="row-actions">
      <button class="link" data-action="topup" onClick={() => onAction({ kind: 'topup', key: k })}>
        Top up
      </button>
      <button class="link" data-action="edit" onClick={() => onAction({ kind: 'edit', key: k })}>
        Edit
      </button>
      <button class="link" data-action="rotate" onClick={() => onAction({ kind: 'rotate', key: k })}>
        Rotate
      </button>
      <button class="link danger" data-action="revoke" onClick={() => onAction({ kind: 'revoke', key: k })}>
        Revoke
      </button>
    </span>
  );
}

export interface KeyActionDialogsProps {
  token: string;
  action: KeyAction | undefined;
  setAction: (action: KeyAction | undefined) => void;
  /** After an action succeeded: what to tell the operator (the page reloads its data). */
  onDone: (message: string) => void;
}

/** The dialog of the chosen action; a created or rotated key's secret follows in its own dialog. */
export function KeyActionDialogs({ token, action, setAction, onDone }: KeyActionDialogsProps) {
  // Model IDs to suggest in the forms: every model a configured upstream serves (the others are not offered).
  const models = useLoad(
    () =>
      getJson<ProviderHealthJson>('/admin/v1/providers', { token }).then((p) => [...new Set(p.data.filter((u) => u.configured).flatMap((u) => u.models))].sort()),
    [token],
  );
  const close = () => setAction(undefined);
  const done = (text: string, next?: KeyAction) => {
    setAction(next);
    onDone(text);
  };
  switch (action?.kind) {
    case 'create': {
      const account = action.account;
      return (
        <CreateDialog
          suggestions={models.data ?? []}
          accountName={account?.name}
          onClose={close}
          submit={(values, idempotencyKey) => createKey(token, account ? { ...values, account_id: account.id } : values, idempotencyKey)}
          onDone={(k) => done(`Created ${k.name}.`, { kind: 'secret', key: k, secret: k.key, title: `New key: ${k.name}` })}
        />
      );
    }
    case 'edit': {
      const target = action.key;
      return (
        <EditDialog
          editing={target}
          suggestions={models.data ?? []}
          onClose={close}
          submit={(values) => updateKey(token, target.id, values)}
          onDone={(k) => done(`Saved ${k.name}.`)}
        />
      );
    }
    case 'topup': {
      const target = action.key;
      return (
        <TopUpDialog
          target={target}
          onClose={close}
          submit={(amount, note, idem) => topUpKey(token, target.id, amount, note, idem)}
          onDone={(k) => done(`Topped up ${k.name}'s account: its balance is now ${usd(k.balance)}.`)}
        />
      );
    }
    case 'revoke': {
      const target = action.key;
      return (
        <ConfirmDialog
          id="revoke"
          title={`Revoke ${target.name}?`}
          text="The key stops working at once. Its balance and history stay."
          confirmLabel="Revoke"
          danger
          onClose={close}
          submit={(idem) => revokeKey(token, target.id, idem)}
          onDone={(k) => done(`Revoked ${k.name}.`)}
        />
      );
    }
    case 'rotate': {
      const target = action.key;
      return (
        <ConfirmDialog
          id="rotate"
          title={`Rotate ${target.name}?`}
          text="A new secret replaces the old one, which stops working at once. The balance and history stay."
          confirmLabel="Rotate"
          onClose={close}
          submit={(idem) => rotateKey(token, target.id, idem)}
          onDone={(k) => done(`Rotated ${k.name}.`, { kind: 'secret', key: k, secret: k.key, title: `New secret for ${k.name}` })}
        />
      );
    }
    case 'secret':
      return <SecretDialog title={action.title} secret={action.secret} onClose={close} />;
    default:
      return null;
  }
}
