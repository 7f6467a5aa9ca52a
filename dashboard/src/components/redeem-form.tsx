// "Redeem a code" for the account token's holder and the key holder alike (POST /v1/account/redeem): one
// field, the answer's amount and new balance, or the server's own message (used, expired, too many tries).
import { useState } from 'preact/hooks';
import { redeemCode } from '../codes-api.js';
import { usd } from '../format.js';
import type { RedemptionJson } from '../types.js';

export function RedeemForm({ token, onRedeemed }: { token: string; onRedeemed: (redemption: RedemptionJson) => void }) {
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [done, setDone] = useState<RedemptionJson | undefined>();
  return (
    <form
      class="redeem toolbar"
      data-redeem
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(undefined);
        setDone(undefined);
        try {
          const redemption = await redeemCode(token, code.trim());
          setDone(redemption);
          setCode('');
          onRedeemed(redemption);
        } catch (failure) {
          setError((failure as Error).message);
        } finally {
          setBusy(false);
        }
      }}
    >
      <label for="redeem-code">Redeem a code</label>
      <input id="redeem-code" name="code" autocomplete="off" spellcheck={false} placeholder="tgr-…" value={code} onInput={(e) => setCode((e.target as HTMLInputElement).value)} />
      <button type="submit" disabled={busy || code.trim() === ''} data-action="redeem">
        Redeem
      </button>
      {done && (
        <span class="notice" role="status" data-redeemed={String(done.amount)} data-balance={String(done.balance)}>
          Added {usd(done.amount)}: the balance is now {usd(done.balance)}.
        </span>
      )}
      {error && (
        <span class="error" role="alert" data-redeem-error>
          {error}
        </span>
      )}
    </form>
  );
}
