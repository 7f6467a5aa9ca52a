// The key holder's page: balance, held and available, limits, the spend chart, recent requests with
// their cost, and the models the key may call with their prices — all from the key's own read-only
// endpoints (GET /v1/key, /v1/key/usage, /v1/key/usage/summary, /v1/models). A key in a shared account
// also shows the account's available balance (what all its keys draw on), and a key with a credit limit
// its cap and what is left of it; a personal account's key without a cap reads as it always did. A
// redemption code credits the key's account (POST /v1/account/redeem takes the key too).
import { useMemo, useState } from 'preact/hooks';
import { getAll, getJson, withQuery } from '../api.js';
import { spendText } from '../chart-text.js';
import { Figure } from '../components/figure.js';
import { RedeemForm } from '../components/redeem-form.js';
import { TimeChart } from '../components/time-chart.js';
import { UsageTable } from '../components/usage-table.js';
import { count, time, usd } from '../format.js';
import { useLoad } from '../hooks.js';
import { RANGES, rangeStart, timeSeries, totals, type Period } from '../summary.js';
import { AddCredit } from './add-credit.js';
import type { KeyHolderAnswerJson, KeyHolderJson, ListPage, ModelJson, ModelListJson, UsageJson, UsageTotalsJson } from '../types.js';

const RECENT = 20;

interface MeData {
  key: KeyHolderJson;
  models: ModelJson[];
  recent: UsageJson[];
  summary: UsageTotalsJson[];
  loadedAt: number;
  /** The range the data are for (the select may already name the next one while it loads). */
  period: Period;
}

async function loadMe(token: string, period: Period): Promise<MeData> {
  const now = Date.now();
  const since = new Date(rangeStart(period, now) * 1000).toISOString();
  const [key, models, recent, summary] = await Promise.all([
    getJson<KeyHolderAnswerJson>('/v1/key', { token }),
    getJson<ModelListJson>('/v1/models', { token }),
    getJson<ListPage<UsageJson>>(withQuery('/v1/key/usage', { limit: RECENT }), { token }),
    getAll<UsageTotalsJson>('/v1/key/usage/summary', token, { group_by: period, since }),
  ]);
  const newestFirst = [...recent.data].sort((a, b) => Date.parse(b.time) - Date.parse(a.time));
  return { key: key.data, models: models.data, recent: newestFirst, summary, loadedAt: now, period };
}

export function MePage({ token }: { token: string }) {
  const [period, setPeriod] = useState<Period>('day');
  const { data, error, reload } = useLoad(() => loadMe(token, period), [token, period]);
  // The chart and its sentences, from the data's own range (the select may name the next one already).
  const chart = useMemo(() => {
    if (!data) return undefined;
    const series = timeSeries(data.summary, data.period, data.loadedAt);
    return { times: series.times, spend: [{ label: 'Spend', values: series.cost, color: '#2f5bea' }], legend: spendText(series, data.period) };
  }, [data]);

  if (error)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  if (!data || !chart) return <p class="loading">Loading…</p>;
  const { key, models } = data;
  const l = key.limits;
  const inRange = totals(data.summary);
  return (
    <section class="me">
      <div class="toolbar">
        <h2>{key.name}</h2>
        <span class="grow" />
        <AddCredit token={token} />
      </div>
      <div class="cards">
        <Figure label="Balance" usd={key.balance} id="balance" />
        <Figure label="Held" usd={key.held} id="held" />
        <Figure label="Available" usd={key.available} id="available" />
        <Figure label="Spent" usd={key.usage} id="spent" />
        {key.credit_limit !== null && <Figure label="Credit limit" usd={key.credit_limit} id="credit-limit" />}
        {key.credit_left !== null && <Figure label="Credit left" usd={key.credit_left} id="credit-left" />}
        {!key.account.personal && <Figure label={`Available in ${key.account.name}`} usd={key.account.available} id="account-available" />}
      </div>
      <RedeemForm token={token} onRedeemed={reload} />
      <dl class="facts">
        {!key.account.personal && (
          <>
            <dt>Account</dt>
            <dd data-field="account">{key.account.name}, shared with its other keys</dd>
          </>
        )}
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

      <div class="toolbar">
        <h3>Spend</h3>
        <span class="grow" />
        <select aria-label="Range" value={period} onChange={(e) => setPeriod((e.target as HTMLSelectElement).value as Period)}>
          {(Object.keys(RANGES) as Period[]).map((p) => (
            <option value={p}>{RANGES[p].label}</option>
          ))}
        </select>
      </div>
      <p class="hint" data-range-spend={String(inRange.cost)} data-range-requests={String(inRange.requests)}>
        {usd(inRange.cost)} over {count(inRange.requests)} requests in this range.
      </p>
      <div class="charts single">
        <TimeChart id="spend" title="Spend" times={chart.times} series={chart.spend} format={usd} legend={chart.legend} utc={data.period === 'day'} />
      </div>

      <h3>Recent requests</h3>
      <UsageTable rows={data.recent} />

      <h3>Models</h3>
      <div class="table-scroll">
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
                <td>{m.model_type}</td>
                <td class="num">{usd(m.pricing.input)}</td>
                <td class="num">{m.pricing.output === undefined ? '—' : usd(m.pricing.output)}</td>
                <td class="num">{m.pricing.cached_input === undefined ? '—' : usd(m.pricing.cached_input)}</td>
                <td class="num">{count(m.context_window)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
