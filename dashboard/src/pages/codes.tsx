// The operator's redemption codes (#/codes, docs/adr/0051-redemption-codes.md): the list by status and
// batch (prefixes only: the codes themselves are never stored), a new batch whose codes are shown once,
// and revoking a code or a whole batch.
import { useState } from 'preact/hooks';
import { newIdempotencyKey } from '../api.js';
import { createCodes, listCodes, revokeCode, revokeCodeBatch, type CodeFields } from '../codes-api.js';
import { Modal } from '../components/modal.js';
import { Pager, nextCursors } from '../components/pager.js';
import { time, usd } from '../format.js';
import { useLoad } from '../hooks.js';
import type { CodeBatchJson, CodeJson } from '../types.js';
import { ConfirmDialog, ErrorLine, useAction } from './key-dialogs.js';

type CodeAction = { kind: 'create' } | { kind: 'created'; batch: CodeBatchJson } | { kind: 'revoke'; code: CodeJson } | { kind: 'revoke-batch'; batchId: string };

const STATUS_BADGE: Record<CodeJson['status'], string> = { unused: 'badge good', redeemed: 'badge', revoked: 'badge bad', expired: 'badge bad' };

export function CodesPage({ token }: { token: string }) {
  const [status, setStatus] = useState('');
  const [batch, setBatch] = useState('');
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [action, setAction] = useState<CodeAction | undefined>();
  const [message, setMessage] = useState<string | undefined>();
  const after = cursors[cursors.length - 1];
  const codes = useLoad(() => listCodes(token, { status, batch_id: batch.trim() || undefined, after }), [token, status, batch, after]);
  const close = () => setAction(undefined);
  const done = (text: string, next?: CodeAction) => {
    setAction(next);
    setMessage(text);
    codes.reload();
  };

  return (
    <section class="codes">
      <div class="toolbar">
        <h2>Redemption codes</h2>
        <span class="grow" />
        <input
          aria-label="Batch"
          placeholder="Batch id…"
          value={batch}
          onInput={(e) => {
            setBatch((e.target as HTMLInputElement).value);
            setCursors([undefined]);
          }}
        />
        <select
          aria-label="Status"
          value={status}
          onChange={(e) => {
            setStatus((e.target as HTMLSelectElement).value);
            setCursors([undefined]);
          }}
        >
          <option value="">All statuses</option>
          <option value="unused">Unused</option>
          <option value="redeemed">Redeemed</option>
          <option value="revoked">Revoked</option>
          <option value="expired">Expired</option>
        </select>
        {batch.trim() !== '' && (
          <button class="danger" data-action="revoke-batch" onClick={() => setAction({ kind: 'revoke-batch', batchId: batch.trim() })}>
            Revoke batch
          </button>
        )}
        <button onClick={() => setAction({ kind: 'create' })} data-action="create-codes">
          New codes
        </button>
      </div>
      {message && (
        <p class="notice" role="status">
          {message}
        </p>
      )}
      <ErrorLine error={codes.error} />
      {!codes.data ? (
        !codes.error && <p class="loading">Loading…</p>
      ) : codes.data.data.length === 0 ? (
        <p class="hint">No codes{status || batch ? ' match' : ' yet'}.</p>
      ) : (
        <div class="table-scroll">
          <table class="codes">
            <thead>
              <tr>
                <th>Code</th>
                <th class="num">Amount</th>
                <th>Status</th>
                <th>Batch</th>
                <th>For account</th>
                <th>Expires</th>
                <th>Redeemed by</th>
                <th>Note</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {codes.data.data.map((c) => (
                <tr key={c.id} data-code={c.id} data-status={c.status} data-amount={String(c.amount)}>
                  <td title={c.id}>
                    <code>{c.prefix}…</code>
                  </td>
                  <td class="num">{usd(c.amount)}</td>
                  <td>
                    <span class={STATUS_BADGE[c.status]}>{c.status}</span>
                  </td>
                  <td>
                    <button class="link" data-batch-link onClick={() => (setBatch(c.batch_id), setCursors([undefined]))}>
                      {c.batch_id}
                    </button>
                  </td>
                  <td>{c.account_id ?? 'any'}</td>
                  <td>{c.expires_at ? time(c.expires_at) : 'never'}</td>
                  <td>{c.redeemed_account_id ? `${c.redeemed_account_id}${c.redeemed_key_id ? ` (${c.redeemed_key_id})` : ''}, ${time(c.redeemed_at!)}` : '—'}</td>
                  <td>{c.note ?? ''}</td>
                  <td>
                    {(c.status === 'unused' || c.status === 'expired') && (
                      <button class="link danger" data-action="revoke" onClick={() => setAction({ kind: 'revoke', code: c })}>
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {codes.data && (
        <Pager
          page={cursors.length - 1}
          hasMore={codes.data.has_more}
          onNext={() => setCursors(nextCursors(cursors, codes.data!.next_cursor))}
          onPrevious={() => setCursors(cursors.slice(0, -1))}
        />
      )}

      {action?.kind === 'create' && (
        <CreateCodesDialog
          onClose={close}
          submit={(fields, idem) => createCodes(token, fields, idem)}
          onDone={(b) => done(`Created ${b.count} codes in ${b.batch_id}.`, { kind: 'created', batch: b })}
        />
      )}
      {action?.kind === 'created' && <NewCodesDialog batch={action.batch} onClose={close} />}
      {action?.kind === 'revoke' && (
        <ConfirmDialog
          id="revoke"
          title={`Revoke ${action.code.prefix}…?`}
          text="The code can no longer be redeemed. A code already redeemed stays redeemed."
          confirmLabel="Revoke"
          danger
          onClose={close}
          submit={(idem) => revokeCode(token, action.code.id, idem)}
          onDone={() => done(`Revoked ${action.code.prefix}….`)}
        />
      )}
      {action?.kind === 'revoke-batch' && (
        <ConfirmDialog
          id="revoke-batch"
          title={`Revoke batch ${action.batchId}?`}
          text="Every code of the batch that is not redeemed can no longer be redeemed."
          confirmLabel="Revoke batch"
          danger
          onClose={close}
          submit={(idem) => revokeCodeBatch(token, action.batchId, idem)}
          onDone={(r) => done(`Revoked ${r.revoked} codes of ${action.batchId}.`)}
        />
      )}
    </section>
  );
}

const inputOf = (set: (value: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value);

function CreateCodesDialog({
  onClose,
  submit,
  onDone,
}: {
  onClose: () => void;
  submit: (fields: CodeFields, idempotencyKey: string) => Promise<CodeBatchJson>;
  onDone: (batch: CodeBatchJson) => void;
}) {
  const [idempotencyKeys] = useState(() => new Map<string, string>());
  const [amount, setAmount] = useState('');
  const [count, setCount] = useState('1');
  const [expires, setExpires] = useState('');
  const [account, setAccount] = useState('');
  const [note, setNote] = useState('');
  const { busy, error, run } = useAction(onDone);
  return (
    <Modal id="create-codes" title="New redemption codes" onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const fields: CodeFields = { amount: amount.trim(), count: count.trim() };
          if (expires.trim() !== '') fields.expires_at = expires.trim();
          if (account.trim() !== '') fields.account_id = account.trim();
          if (note.trim() !== '') fields.note = note.trim();
          const body = JSON.stringify(fields);
          const idem = idempotencyKeys.get(body) ?? idempotencyKeys.set(body, newIdempotencyKey()).get(body)!;
          void run(() => submit(fields, idem));
        }}
      >
        <div class="grid2">
          <label for="codes-amount">Amount each (USD)</label>
          <input id="codes-amount" name="amount" required inputMode="decimal" value={amount} onInput={inputOf(setAmount)} />
          <label for="codes-count">How many (1–1000)</label>
          <input id="codes-count" name="count" required inputMode="numeric" value={count} onInput={inputOf(setCount)} />
        </div>
        <label for="codes-expires_at">Expires (30d, 12h or an ISO time; empty: never)</label>
        <input id="codes-expires_at" name="expires_at" placeholder="never" value={expires} onInput={inputOf(setExpires)} />
        <label for="codes-account_id">Only for account (empty: any)</label>
        <input id="codes-account_id" name="account_id" placeholder="acct_…" value={account} onInput={inputOf(setAccount)} />
        <label for="codes-note">Note</label>
        <input id="codes-note" name="note" value={note} onInput={inputOf(setNote)} />
        <div class="toolbar">
          <button type="submit" disabled={busy || amount.trim() === ''}>
            Create codes
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

/** The new codes, shown once: Tollgate keeps only their hashes. */
function NewCodesDialog({ batch, onClose }: { batch: CodeBatchJson; onClose: () => void }) {
  const codes = batch.codes.map((c) => c.code);
  const lost = codes.some((c) => c === null);
  const text = codes.join('\n');
  const [copied, setCopied] = useState(false);
  return (
    <Modal id="new-codes" title={`${batch.count} codes of ${usd(batch.amount)} (${batch.batch_id})`} onClose={onClose}>
      {lost ? (
        <p class="error" role="alert" data-secret-lost>
          The codes were in an earlier answer that did not reach this page, and Tollgate never shows a code twice. Revoke the batch and create another.
        </p>
      ) : (
        <div class="secret-box">
          <p>
            <strong>Copy these codes now.</strong> They are shown only once; Tollgate keeps only their hashes.
          </p>
          <textarea class="secret" readOnly rows={Math.min(codes.length, 12)} data-codes value={text} />
          <div class="toolbar">
            <button
              type="button"
              data-copy
              onClick={async () => {
                await navigator.clipboard.writeText(text).then(
                  () => setCopied(true),
                  () => undefined,
                );
              }}
            >
              Copy
            </button>
            {copied && <span class="hint">Copied.</span>}
          </div>
        </div>
      )}
      <div class="toolbar">
        <button type="button" class="secondary" onClick={onClose} data-close>
          Done
        </button>
      </div>
    </Modal>
  );
}
