// The operator's webhooks (#/webhooks, docs/adr/0052-signed-webhooks.md): the outbox's events, newest
// first, filtered by type and status, each with its status, attempts, last error and next try, and a
// Resend button (POST …/resend: the same webhook-id, due again now, to every configured endpoint).
import { useState } from 'preact/hooks';
import { newIdempotencyKey } from '../api.js';
import { Pager, nextCursors } from '../components/pager.js';
import { text, time } from '../format.js';
import { useLoad } from '../hooks.js';
import type { WebhookEventJson } from '../types.js';
import { listWebhookEvents, resendWebhookEvent } from '../webhooks-api.js';

const TYPES = ['balance.low', 'budget.reached', 'key.expiring', 'key.revoked', 'payment.succeeded', 'payment.refunded', 'upstream.cooling', 'upstream.recovered'];
const STATUSES = ['pending', 'delivered', 'failed', 'skipped'];
const BADGE: Record<WebhookEventJson['status'], string> = { delivered: 'badge good', failed: 'badge bad', pending: 'badge', skipped: 'badge' };

export function WebhooksPage({ token }: { token: string }) {
  const [type, setType] = useState('');
  const [status, setStatus] = useState('');
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [reload, setReload] = useState(0);
  const [message, setMessage] = useState<{ error: boolean; text: string } | undefined>();
  const after = cursors[cursors.length - 1];
  const events = useLoad(() => listWebhookEvents(token, { type, status, after }), [token, type, status, after, reload]);
  const resetPaging = () => setCursors([undefined]);

  async function resend(event: WebhookEventJson) {
    try {
      await resendWebhookEvent(token, event.id, newIdempotencyKey());
      setMessage({ error: false, text: `Event ${event.id} (${event.type}) is due again now.` });
      setReload((n) => n + 1);
    } catch (error) {
      setMessage({ error: true, text: error instanceof Error ? error.message : String(error) });
    }
  }

  return (
    <section class="webhooks">
      <div class="toolbar">
        <h2>Webhooks</h2>
        <span class="grow" />
        <select aria-label="Type" value={type} onChange={(e) => (setType((e.target as HTMLSelectElement).value), resetPaging())}>
          <option value="">All types</option>
          {TYPES.map((t) => (
            <option value={t}>{t}</option>
          ))}
        </select>
        <select aria-label="Status" value={status} onChange={(e) => (setStatus((e.target as HTMLSelectElement).value), resetPaging())}>
          <option value="">All statuses</option>
          {STATUSES.map((s) => (
            <option value={s}>{s}</option>
          ))}
        </select>
        <button class="secondary" onClick={() => setReload((n) => n + 1)}>
          Refresh
        </button>
      </div>
      {message && (
        <p class={message.error ? 'error' : 'hint'} role={message.error ? 'alert' : 'status'}>
          {message.text}
        </p>
      )}
      {events.error && (
        <p class="error" role="alert">
          {events.error}
        </p>
      )}
      {!events.data ? (
        !events.error && <p class="loading">Loading…</p>
      ) : events.data.data.length === 0 ? (
        <p class="hint">No webhook events{type || status ? ' match' : ' yet'}.</p>
      ) : (
        <div class="table-scroll">
          <table class="webhooks">
            <thead>
              <tr>
                <th class="num">ID</th>
                <th>Type</th>
                <th>Created</th>
                <th>Status</th>
                <th class="num">Attempts</th>
                <th>Last error</th>
                <th>Next try</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {events.data.data.map((e) => (
                <tr key={e.id} data-event={String(e.id)} data-type={e.type} data-status={e.status} data-attempts={String(e.attempts)} data-message-id={e.message_id}>
                  <td class="num" title={e.message_id}>
                    {e.id}
                  </td>
                  <td title={JSON.stringify(e.data)}>{e.type}</td>
                  <td>{time(e.created_at)}</td>
                  <td>
                    <span class={BADGE[e.status]}>{e.status}</span>
                  </td>
                  <td class="num">{e.attempts}</td>
                  <td class="wrap">{text(e.last_error)}</td>
                  <td>{e.next_attempt_at ? time(e.next_attempt_at) : '—'}</td>
                  <td>
                    <button class="secondary" data-action="resend" onClick={() => void resend(e)}>
                      Resend
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {events.data && (
        <Pager
          page={cursors.length - 1}
          hasMore={events.data.has_more}
          onNext={() => setCursors(nextCursors(cursors, events.data!.next_cursor))}
          onPrevious={() => setCursors(cursors.slice(0, -1))}
        />
      )}
    </section>
  );
}
