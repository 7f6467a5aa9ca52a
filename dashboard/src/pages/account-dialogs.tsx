// The dialogs of the operator's account pages: create an account (name, opening balance, budget), top it
// up or adjust it (a credit or, negative, a debit with its reason). Each runs its call once per set of
// values (an Idempotency-Key per amount and note), and shows the API's own message when refused.
import { useState } from 'preact/hooks';
import { newIdempotencyKey } from '../api.js';
import type { AccountFields } from '../accounts-api.js';
import { Modal } from '../components/modal.js';
import { usd } from '../format.js';
import type { AccountJson } from '../types.js';
import { ErrorLine, useAction } from './key-dialogs.js';

/** One Idempotency-Key per distinct body typed in a dialog: a resubmission never acts twice. */
function useIdempotencyKeys(): (body: unknown) => string {
  const [keys] = useState(() => new Map<string, string>());
  return (body) => {
    const text = JSON.stringify(body);
    return keys.get(text) ?? keys.set(text, newIdempotencyKey()).get(text)!;
  };
}

const inputOf = (set: (value: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value);

export function CreateAccountDialog({
  onClose,
  submit,
  onDone,
}: {
  onClose: () => void;
  submit: (fields: AccountFields, idempotencyKey: string) => Promise<AccountJson>;
  onDone: (account: AccountJson) => void;
}) {
  const keyFor = useIdempotencyKeys();
  const [name, setName] = useState('');
  const [balance, setBalance] = useState('');
  const [budget, setBudget] = useState('');
  const [period, setPeriod] = useState<'day' | 'week' | 'month'>('month');
  const { busy, error, run } = useAction(onDone);
  return (
    <Modal id="create-account" title="New account" onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          // Money as typed: the server reads it exactly and names what is wrong with it.
          const fields: AccountFields = { name: name.trim() };
          if (balance.trim() !== '') fields.balance = balance.trim();
          if (budget.trim() !== '') {
            fields.budget = budget.trim();
            fields.budget_period = period;
          }
          void run(() => submit(fields, keyFor(fields)));
        }}
      >
        <label for="account-name">Name</label>
        <input id="account-name" name="name" required autocomplete="off" value={name} onInput={inputOf(setName)} />
        <label for="account-balance">Opening balance (USD)</label>
        <input id="account-balance" name="balance" inputMode="decimal" placeholder="0" value={balance} onInput={inputOf(setBalance)} />
        <div class="grid2">
          <label for="account-budget">Budget (USD, empty: none)</label>
          <input id="account-budget" name="budget" inputMode="decimal" value={budget} onInput={inputOf(setBudget)} />
          <label for="account-budget_period">Budget period</label>
          <select id="account-budget_period" name="budget_period" value={period} onChange={(e) => setPeriod((e.target as HTMLSelectElement).value as typeof period)}>
            <option value="day">day</option>
            <option value="week">week</option>
            <option value="month">month</option>
          </select>
        </div>
        <div class="toolbar">
          <button type="submit" disabled={busy || name.trim() === ''}>
            Create account
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

/**
 * A top-up (a positive amount, an optional note) or an adjustment (a signed amount and its required
 * reason) of the account's balance.
 */
export function AccountMoneyDialog({
  kind,
  account,
  onClose,
  submit,
  onDone,
}: {
  kind: 'topup' | 'adjust';
  account: AccountJson;
  onClose: () => void;
  submit: (amount: string, note: string | undefined, idempotencyKey: string) => Promise<AccountJson>;
  onDone: (account: AccountJson) => void;
}) {
  const keyFor = useIdempotencyKeys();
  const [amount, setAmount] = useState('');
  const [note, setNote] = useState('');
  const { busy, error, run } = useAction(onDone);
  const topup = kind === 'topup';
  return (
    <Modal id={`account-${kind}`} title={`${topup ? 'Top up' : 'Adjust'} ${account.name}`} onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const body = [amount.trim(), note.trim() || undefined] as const;
          void run(() => submit(body[0], body[1], keyFor(body)));
        }}
      >
        <p class="hint">Balance now {usd(account.balance)}.</p>
        <label for={`account-${kind}-amount`}>{topup ? 'Amount (USD)' : 'Amount (USD; negative takes credit away)'}</label>
        <input id={`account-${kind}-amount`} name="amount" inputMode="decimal" required value={amount} onInput={inputOf(setAmount)} />
        <label for={`account-${kind}-note`}>{topup ? 'Note (optional)' : 'Reason'}</label>
        <input id={`account-${kind}-note`} name="note" required={!topup} value={note} onInput={inputOf(setNote)} />
        <div class="toolbar">
          <button type="submit" disabled={busy || amount.trim() === '' || (!topup && note.trim() === '')}>
            {topup ? 'Add credit' : 'Adjust'}
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
