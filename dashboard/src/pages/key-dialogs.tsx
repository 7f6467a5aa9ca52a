// The dialogs of the keys page. Each one runs its API call once per user action (an Idempotency-Key made
// when the dialog opens, so submitting twice or retrying after a network error never acts twice), and
// shows the API's own error message when the call is refused.
import { useState } from 'preact/hooks';
import { newIdempotencyKey } from '../api.js';
import { Modal } from '../components/modal.js';
import { SecretBox } from '../components/secret-box.js';
import { usd } from '../format.js';
import type { IssuedKeyJson, KeyJson } from '../types.js';
import { KeyForm, type KeyFormValues } from './key-form.js';

/** Runs an action, keeping the busy flag and the error message. */
export function useAction<T>(onDone: (value: T) => void) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const run = async (action: () => Promise<T>) => {
    setBusy(true);
    setError(undefined);
    try {
      onDone(await action());
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}

export const ErrorLine = ({ error }: { error: string | undefined }) =>
  error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;

interface FormDialogProps<T extends KeyJson = KeyJson> {
  suggestions: readonly string[];
  onClose: () => void;
  submit: (values: KeyFormValues) => Promise<T>;
  onDone: (key: T) => void;
}

export function CreateDialog({
  suggestions,
  accountName,
  onClose,
  submit,
  onDone,
}: Omit<FormDialogProps<IssuedKeyJson>, 'submit'> & {
  /** The account the key goes into (none: a personal account is made for it). */
  accountName?: string | undefined;
  submit: (values: KeyFormValues, idempotencyKey: string) => Promise<IssuedKeyJson>;
}) {
  // One Idempotency-Key per set of values in this dialog: resubmitting after a lost answer never issues a
  // second key, while corrected values after a refusal are a new request.
  const [idempotencyKeys] = useState(() => new Map<string, string>());
  const keyFor = (values: KeyFormValues) => {
    const body = JSON.stringify(values);
    return idempotencyKeys.get(body) ?? idempotencyKeys.set(body, newIdempotencyKey()).get(body)!;
  };
  const { busy, error, run } = useAction(onDone);
  return (
    <Modal id="create" title={accountName === undefined ? 'New key' : `New key in ${accountName}`} onClose={onClose}>
      <KeyForm suggestions={suggestions} accountName={accountName} submitLabel="Create key" busy={busy} onCancel={onClose} onSubmit={(v) => run(() => submit(v, keyFor(v)))} />
      <ErrorLine error={error} />
    </Modal>
  );
}

export function EditDialog({ editing, suggestions, onClose, submit, onDone }: FormDialogProps & { editing: KeyJson }) {
  const { busy, error, run } = useAction(onDone);
  return (
    <Modal id="edit" title={`Edit ${editing.name}`} onClose={onClose}>
      <KeyForm editing={editing} suggestions={suggestions} submitLabel="Save" busy={busy} onCancel={onClose} onSubmit={(v) => run(() => submit(v))} />
      <ErrorLine error={error} />
    </Modal>
  );
}

export function TopUpDialog({
  target,
  onClose,
  submit,
  onDone,
}: {
  target: KeyJson;
  onClose: () => void;
  submit: (amount: string, note: string | undefined, idempotencyKey: string) => Promise<KeyJson>;
  onDone: (key: KeyJson) => void;
}) {
  // One Idempotency-Key per amount and note: resubmitting the same top-up never credits twice, while a
  // corrected amount after a refusal is a new request.
  const [idempotencyKeys] = useState(() => new Map<string, string>());
  const keyFor = (body: string) => idempotencyKeys.get(body) ?? idempotencyKeys.set(body, newIdempotencyKey()).get(body)!;
  const [amount, setAmount] = useState('');
  const [note, setNote] = useState('');
  const { busy, error, run } = useAction(onDone);
  return (
    <Modal id="topup" title={`Top up ${target.name}`} onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const trimmed = note.trim() || undefined;
          // The amount as typed: the server reads it exactly and names what is wrong with it.
          void run(() => submit(amount.trim(), trimmed, keyFor(JSON.stringify([amount.trim(), trimmed]))));
        }}
      >
        <p class="hint">Balance now {usd(target.balance)}.</p>
        <label for="topup-amount">Amount (USD)</label>
        <input id="topup-amount" name="amount" inputMode="decimal" required value={amount} onInput={(e) => setAmount((e.target as HTMLInputElement).value)} />
        <label for="topup-note">Note (optional)</label>
        <input id="topup-note" name="note" value={note} onInput={(e) => setNote((e.target as HTMLInputElement).value)} />
        <div class="toolbar">
          <button type="submit" disabled={busy || amount.trim() === ''}>
            Add credit
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

export function ConfirmDialog<T>({
  id,
  title,
  text,
  confirmLabel,
  danger = false,
  onClose,
  submit,
  onDone,
}: {
  id: string;
  title: string;
  text: string;
  confirmLabel: string;
  danger?: boolean;
  onClose: () => void;
  submit: (idempotencyKey: string) => Promise<T>;
  onDone: (key: T) => void;
}) {
  const [idempotencyKey] = useState(newIdempotencyKey);
  const { busy, error, run } = useAction(onDone);
  return (
    <Modal id={id} title={title} onClose={onClose}>
      <p>{text}</p>
      <div class="toolbar">
        <button class={danger ? 'danger' : ''} disabled={busy} data-confirm onClick={() => run(() => submit(idempotencyKey))}>
          {confirmLabel}
        </button>
        <button type="button" class="secondary" onClick={onClose}>
          Cancel
        </button>
      </div>
      <ErrorLine error={error} />
    </Modal>
  );
}

/**
 * The secret of a created or rotated key. A retried action (the same Idempotency-Key, after an answer that
 * never arrived) is answered with a replay whose secret is null: the server keeps only its hash, so the
 * secret cannot be shown again — say so, and how to get a new one, rather than show an empty secret.
 */
export function SecretDialog({
  title,
  secret,
  onClose,
  what = 'key',
}: {
  title: string;
  secret: string | null;
  onClose: () => void;
  /** What the secret is: a key's, or an account's self-service token. */
  what?: 'key' | 'token';
}) {
  return (
    <Modal id="secret" title={title} onClose={onClose}>
      {secret === null ? (
        <p class="error" role="alert" data-secret-lost>
          The secret was in an earlier answer that did not reach this page, and Tollgate never shows a secret twice.{' '}
          {what === 'key' ? 'Rotate the key to get a new one.' : 'Issue a new token to get one.'}
        </p>
      ) : (
        <SecretBox secret={secret} what={what} />
      )}
      <div class="toolbar">
        <button type="button" class="secondary" onClick={onClose} data-close>
          Done
        </button>
      </div>
    </Modal>
  );
}
