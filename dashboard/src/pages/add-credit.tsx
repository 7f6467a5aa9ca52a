// "Add credit" (docs/adr/0050-stripe-top-ups.md), in the account token holder's view and the key holder's:
// shown only when GET /v1/account/checkout says payments are on; the amount goes to POST
// /v1/account/checkout and the browser goes to the Stripe Checkout page it answers. The credit arrives
// when Stripe tells the gateway the payment succeeded.
import { useState } from 'preact/hooks';
import { newIdempotencyKey } from '../api.js';
import { Modal } from '../components/modal.js';
import { usd } from '../format.js';
import { useLoad } from '../hooks.js';
import { checkoutOptions, startCheckout, type CheckoutJson } from '../payments-api.js';
import { ErrorLine, useAction } from './key-dialogs.js';

/** Where the browser goes to pay (a function, so a test could replace it; the page leaves). */
const goTo = (url: string) => window.location.assign(url);

export function AddCredit({ token }: { token: string }) {
  const options = useLoad(() => checkoutOptions(token), [token]);
  const [open, setOpen] = useState(false);
  const o = options.data;
  if (!o?.enabled || o.min_amount === null || o.max_amount === null) return null;
  return (
    <>
      <button data-action="add-credit" onClick={() => setOpen(true)}>
        Add credit
      </button>
      {open && <AddCreditDialog token={token} min={o.min_amount} max={o.max_amount} onClose={() => setOpen(false)} />}
    </>
  );
}

function AddCreditDialog({ token, min, max, onClose }: { token: string; min: number; max: number; onClose: () => void }) {
  const [idempotencyKeys] = useState(() => new Map<string, string>());
  const [amount, setAmount] = useState('');
  const { busy, error, run } = useAction((session: CheckoutJson) => goTo(session.url));
  return (
    <Modal id="add-credit" title="Add credit" onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const typed = amount.trim();
          // One checkout per amount typed, however often the button is pressed.
          const idem = idempotencyKeys.get(typed) ?? idempotencyKeys.set(typed, newIdempotencyKey()).get(typed)!;
          void run(() => startCheckout(token, typed, idem));
        }}
      >
        <p class="hint">
          Pay by card through Stripe; the credit reaches the account as soon as Stripe confirms the payment. From {usd(min)} to {usd(max)}.
        </p>
        <label for="credit-amount">Amount (USD)</label>
        <input id="credit-amount" name="amount" inputMode="decimal" required autocomplete="off" value={amount} onInput={(e) => setAmount((e.target as HTMLInputElement).value)} />
        <div class="toolbar">
          <button type="submit" disabled={busy || amount.trim() === ''}>
            Continue to payment
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
