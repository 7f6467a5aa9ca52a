// The fields of a key, for creating one and for editing one: name, (opening balance, unless the key goes
// into an account), credit limit, allowed models, limits and expiry. Empty limit fields mean "no limit"
// (null), as in the API.
import { useState } from 'preact/hooks';
import type { KeyFields, LimitsInput } from '../keys-api.js';
import type { KeyJson, LimitsJson } from '../types.js';

export interface KeyFormValues extends KeyFields {
  /** As typed (the server reads it exactly); absent for a key that goes into an account. */
  balance?: string;
}

interface Draft {
  name: string;
  balance: string;
  credit_limit: string;
  allModels: boolean;
  models: string;
  rpm: string;
  tpm: string;
  max_concurrent: string;
  budget: string;
  budget_period: string;
  expires: string;
}

function draftOf(key: KeyJson | undefined): Draft {
  const l = key?.limits;
  const text = (v: number | null | undefined) => (v === null || v === undefined ? '' : String(v));
  return {
    name: key?.name ?? '',
    balance: '',
    credit_limit: text(key?.credit_limit),
    allModels: key ? key.allowed_models === '*' : true,
    models: key && key.allowed_models !== '*' ? key.allowed_models.join(', ') : '',
    rpm: text(l?.rpm),
    tpm: text(l?.tpm),
    max_concurrent: text(l?.max_concurrent),
    budget: text(l?.budget),
    budget_period: l?.budget_period ?? 'month',
    expires: key?.expires_at ? toLocalInput(key.expires_at) : '',
  };
}

/** An ISO time as a datetime-local value in the viewer's zone. */
function toLocalInput(iso: string): string {
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/**
 * The form's values for the API. Editing, only the limits and the expiry the user changed are sent:
 * the form starts from the limits in force, which may be the config's defaults, and sending those back
 * would pin them on the key.
 */
function valuesOf(d: Draft, initial: Draft | undefined, inAccount: boolean): KeyFormValues {
  const whole = (v: string) => (v.trim() === '' ? null : Number(v));
  const changed = (name: keyof Draft) => !initial || d[name] !== initial[name];
  const limits: LimitsInput = {};
  for (const name of ['rpm', 'tpm', 'max_concurrent'] as const) if (changed(name)) limits[name] = whole(d[name]);
  if (changed('budget')) limits.budget = d.budget.trim() === '' ? null : d.budget.trim();
  if (changed('budget') || changed('budget_period')) limits.budget_period = d.budget.trim() === '' ? null : (d.budget_period as LimitsJson['budget_period']);
  const values: KeyFormValues = {
    name: d.name.trim(),
    allowed_models: d.allModels ? '*' : d.models.split(/[\s,]+/).filter(Boolean),
    limits,
  };
  if (!initial && !inAccount) values.balance = d.balance.trim() === '' ? '0' : d.balance.trim();
  // Creating: a cap only when one is typed. Editing: only a change (empty: the cap is lifted).
  if (initial ? changed('credit_limit') : d.credit_limit.trim() !== '') values.credit_limit = d.credit_limit.trim() === '' ? null : d.credit_limit.trim();
  if (changed('expires')) values.expires_at = d.expires ? new Date(d.expires).toISOString() : null;
  return values;
}

export interface KeyFormProps {
  /** The key being edited; none when creating. */
  editing?: KeyJson;
  /** Model IDs to suggest (from the providers list). */
  suggestions: readonly string[];
  /** Creating a key in this account: no opening balance (the account holds the money). */
  accountName?: string;
  submitLabel: string;
  busy: boolean;
  onSubmit: (values: KeyFormValues) => void;
  onCancel: () => void;
}

export function KeyForm({ editing, suggestions, accountName, submitLabel, busy, onSubmit, onCancel }: KeyFormProps) {
  const [initial] = useState<Draft | undefined>(() => (editing ? draftOf(editing) : undefined));
  const [draft, setDraft] = useState<Draft>(() => draftOf(editing));
  const field = (name: keyof Draft) => ({
    id: `key-${name}`,
    name,
    value: draft[name] as string,
    onInput: (e: Event) => setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value }),
  });
  return (
    <form
      method="dialog"
      class="key-form"
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit(valuesOf(draft, initial, accountName !== undefined));
      }}
    >
      <label for="key-name">Name</label>
      <input {...field('name')} required autocomplete="off" />
      {!editing && accountName === undefined && (
        <>
          <label for="key-balance">Opening balance (USD)</label>
          <input {...field('balance')} inputMode="decimal" placeholder="0" />
        </>
      )}
      {accountName !== undefined && <p class="hint">The key spends the money of {accountName}, within its credit limit.</p>}
      <label for="key-credit_limit">Credit limit (USD, empty: none)</label>
      <input {...field('credit_limit')} inputMode="decimal" placeholder="none" />
      <label class="inline">
        <input type="checkbox" name="allModels" checked={draft.allModels} onChange={(e) => setDraft({ ...draft, allModels: (e.target as HTMLInputElement).checked })} />
        All models
      </label>
      {!draft.allModels && (
        <>
          <label for="key-models">Allowed models (comma-separated)</label>
          <input {...field('models')} list="model-ids" autocomplete="off" />
          <datalist id="model-ids">
            {suggestions.map((m) => (
              <option value={m} />
            ))}
          </datalist>
        </>
      )}
      <fieldset>
        <legend>Limits (empty: none)</legend>
        <div class="grid2">
          <label for="key-rpm">Requests / min</label>
          <input {...field('rpm')} inputMode="numeric" />
          <label for="key-tpm">Tokens / min</label>
          <input {...field('tpm')} inputMode="numeric" />
          <label for="key-max_concurrent">At once</label>
          <input {...field('max_concurrent')} inputMode="numeric" />
          <label for="key-budget">Budget (USD)</label>
          <input {...field('budget')} inputMode="decimal" />
          <label for="key-budget_period">Budget period</label>
          <select {...field('budget_period')} onChange={(e) => setDraft({ ...draft, budget_period: (e.target as HTMLSelectElement).value })}>
            <option value="day">day</option>
            <option value="week">week</option>
            <option value="month">month</option>
          </select>
          <label for="key-expires">Expires</label>
          <input {...field('expires')} type="datetime-local" />
        </div>
      </fieldset>
      <div class="toolbar">
        <button type="submit" disabled={busy}>
          {submitLabel}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
