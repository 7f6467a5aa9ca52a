// The key holder's page: balance, held and available, limits, and the models the key may call with
// their prices (GET /v1/key, GET /v1/models).
import { useEffect, useState } from 'preact/hooks';
import { ApiError, getJson } from '../api.js';
import { count, time, usd } from '../format.js';

interface KeyInfo {
  id: string;
  name: string;
  balance: number;
  held: number;
  available: number;
  usage: number;
  limits: { rpm: number | null; tpm: number | null; max_concurrent: number | null; budget: number | null; budget_period: string | null };
  expires_at: string | null;
  budget_used: number | null;
  budget_resets_at: string | null;
}

interface ModelEntry {
  id: string;
  type: string;
  context_window: number | null;
  max_output_tokens: number | null;
  pricing: { input: number; output?: number; cached_input?: number };
}

export function MePage({ token, onSignedOut }: { token: string; onSignedOut: () => void }) {
  const [key, setKey] = useState<KeyInfo | undefined>();
  const [models, setModels] = useState<ModelEntry[] | undefined>();
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    Promise.all([getJson<{ data: KeyInfo }>('/v1/key', { token }), getJson<{ data: ModelEntry[] }>('/v1/models', { token })]).then(
      ([k, m]) => {
        setKey(k.data);
        setModels(m.data);
      },
      (e: unknown) => {
        if (e instanceof ApiError && e.status === 401) onSignedOut();
        else setError((e as Error).message);
      },
    );
  }, [token]);

  if (error) return <p class="error">{error}</p>;
  if (!key || !models) return <p class="loading">Loading…</p>;
  const l = key.limits;
  return (
    <section>
      <h2>{key.name}</h2>
      <div class="cards">
        <Figure label="Balance" usd={key.balance} id="balance" />
        <Figure label="Held" usd={key.held} id="held" />
        <Figure label="Available" usd={key.available} id="available" />
        <Figure label="Spent" usd={key.usage} id="spent" />
      </div>
      <dl class="facts">
        {l.budget !== null && (
          <>
            <dt>Budget</dt>
            <dd>
              {usd(key.budget_used)} of {usd(l.budget)} per {l.budget_period}, resets {time(key.budget_resets_at)}
            </dd>
          </>
        )}
        {(l.rpm !== null || l.tpm !== null || l.max_concurrent !== null) && (
          <>
            <dt>Rate limits</dt>
            <dd>
              {[l.rpm !== null && `${count(l.rpm)} requests/min`, l.tpm !== null && `${count(l.tpm)} tokens/min`, l.max_concurrent !== null && `${l.max_concurrent} at once`]
                .filter(Boolean)
                .join(', ')}
            </dd>
          </>
        )}
        <dt>Expires</dt>
        <dd>{key.expires_at ? time(key.expires_at) : 'never'}</dd>
      </dl>
      <h3>Models</h3>
      <table class="models">
        <thead>
          <tr>
            <th>Model</th>
            <th>Type</th>
            <th class="num">Input / 1M</th>
            <th class="num">Output / 1M</th>
            <th class="num">Cached / 1M</th>
            <th class="num">Context</th>
          </tr>
        </thead>
        <tbody>
          {models.map((m) => (
            <tr key={m.id}>
              <td>{m.id}</td>
              <td>{m.type}</td>
              <td class="num">{usd(m.pricing.input)}</td>
              <td class="num">{m.pricing.output === undefined ? '—' : usd(m.pricing.output)}</td>
              <td class="num">{m.pricing.cached_input === undefined ? '—' : usd(m.pricing.cached_input)}</td>
              <td class="num">{count(m.context_window)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** A headline money figure; `data-usd` holds the exact amount the API gave. */
export function Figure({ label, usd: amount, id }: { label: string; usd: number; id: string }) {
  return (
    <div class="card" data-figure={id} data-usd={String(amount)}>
      <span class="label">{label}</span>
      <span class="value">{usd(amount)}</span>
    </div>
  );
}
