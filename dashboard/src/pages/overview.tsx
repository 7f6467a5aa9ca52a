// The operator's overview: spend, requests, tokens and error rate over the last 24 hours (by hour) or
// 30 days (by day), the requests refused for want of a valid key, top models, top keys and the holds in
// flight. Its data: the usage summaries for the range (by time, model and key), the key list and the
// count of refused requests, fetched in parallel.
import { useMemo, useState } from 'preact/hooks';
import { getAll, getJson, withQuery } from '../api.js';
import { errorRateText, percentText, requestsChartText, spendText, tokensText } from '../chart-text.js';
import { CountFigure, Figure } from '../components/figure.js';
import { TimeChart } from '../components/time-chart.js';
import { count, usd } from '../format.js';
import { useLoad } from '../hooks.js';
import { RANGES, groupOf, rangeStart, timeSeries, totals, totalTokens, type Period } from '../summary.js';
import type { KeyJson, UnauthenticatedJson, UsageTotalsJson } from '../types.js';
import { listAllKeys } from '../keys-api.js';

interface OverviewData {
  byTime: UsageTotalsJson[];
  byModel: UsageTotalsJson[];
  byKey: UsageTotalsJson[];
  keys: KeyJson[];
  /** Requests refused for a missing or unknown key in the range. */
  refusedBadKey: number;
  loadedAt: number;
  /** The range the data are for (the select may already name the next one while it loads). */
  period: Period;
}

const TOP = 8;

async function loadOverview(token: string, period: Period): Promise<OverviewData> {
  const now = Date.now();
  const since = new Date(rangeStart(period, now) * 1000).toISOString();
  const summary = (groupBy: string) => getAll<UsageTotalsJson>('/admin/v1/usage/summary', token, { group_by: groupBy, since });
  const [byTime, byModel, byKey, keys, refusedBadKey] = await Promise.all([
    summary(period),
    summary('model'),
    summary('key'),
    listAllKeys(token),
    countRefusedBadKey(token, period, since),
  ]);
  return { byTime, byModel, byKey, keys, refusedBadKey, loadedAt: now, period };
}

/**
 * Requests without a valid key are no usage rows (a flood of bad keys must not grow the database); the
 * gateway counts them per minute instead, and answers their total over the range.
 */
async function countRefusedBadKey(token: string, period: Period, since: string): Promise<number> {
  const counts = await getJson<UnauthenticatedJson>(withQuery('/admin/v1/usage/unauthenticated', { since, group_by: period }), { token });
  return counts.total;
}

export function OverviewPage({ token }: { token: string }) {
  const [period, setPeriod] = useState<Period>('hour');
  const { data, error, reload } = useLoad(() => loadOverview(token, period), [token, period]);
  // The charts and their sentences, from the data's own range (the select may name the next one already).
  const charts = useMemo(() => {
    if (!data) return undefined;
    const series = timeSeries(data.byTime, data.period, data.loadedAt);
    return {
      series,
      spend: [{ label: 'Spend', values: series.cost, color: '#2f5bea' }],
      requests: [{ label: 'Requests', values: series.requests, color: '#1f8a4c' }],
      tokens: [{ label: 'Tokens', values: series.tokens, color: '#8a4fd1' }],
      errors: [{ label: 'Error rate', values: series.errorRate, color: '#c0352b' }],
      text: {
        spend: spendText(series, data.period),
        requests: requestsChartText(series, data.period),
        tokens: tokensText(series, data.period),
        errors: errorRateText(series, data.period),
      },
    };
  }, [data]);

  if (error) return <p class="error" role="alert">{error}</p>;
  if (!data || !charts) return <p class="loading">Loading…</p>;
  const sum = totals(data.byTime);
  const names = Object.fromEntries(data.keys.map((k) => [k.id, k.name]));
  const holding = data.keys.filter((k) => k.held > 0).sort((a, b) => b.held - a.held);
  const heldNano = holding.reduce((n, k) => n + Math.round(k.held * 1e9), 0);
  const byCost = (rows: UsageTotalsJson[]) => [...rows].sort((a, b) => b.cost - a.cost || b.requests - a.requests).slice(0, TOP);

  return (
    <section class="overview">
      <div class="toolbar">
        <h2>Overview</h2>
        <span class="grow" />
        <select aria-label="Range" value={period} onChange={(e) => setPeriod((e.target as HTMLSelectElement).value as Period)}>
          {(Object.keys(RANGES) as Period[]).map((p) => (
            <option value={p}>{RANGES[p].label}</option>
          ))}
        </select>
        <button class="secondary" onClick={reload}>
          Refresh
        </button>
      </div>
      <div class="cards">
        <Figure label="Spend" usd={sum.cost} id="spend" />
        <CountFigure label="Requests" value={sum.requests} id="requests" />
        <CountFigure label="Tokens" value={sum.tokens} id="tokens" />
        <CountFigure label="Error rate" value={sum.requests ? Number(((100 * sum.errors) / sum.requests).toFixed(1)) : null} id="error-rate" suffix="%" />
        <CountFigure label="Refused: no valid key" value={data.refusedBadKey} id="unauthenticated" />
        <Figure label="Held in flight" usd={heldNano / 1e9} id="held" />
      </div>
      <div class="charts">
        <TimeChart id="spend" title="Spend" times={charts.series.times} series={charts.spend} format={usd} legend={charts.text.spend} utc={data.period === 'day'} />
        <TimeChart id="requests" title="Requests" times={charts.series.times} series={charts.requests} format={count} legend={charts.text.requests} utc={data.period === 'day'} />
        <TimeChart id="tokens" title="Tokens" times={charts.series.times} series={charts.tokens} format={count} legend={charts.text.tokens} utc={data.period === 'day'} />
        <TimeChart id="errors" title="Error rate" times={charts.series.times} series={charts.errors} format={percentText} legend={charts.text.errors} utc={data.period === 'day'} />
      </div>
      <div class="columns">
        <div>
          <h3>Top models</h3>
          <SummaryTable id="top-models" rows={byCost(data.byModel)} label="Model" name={groupOf} />
        </div>
        <div>
          <h3>Top keys</h3>
          <SummaryTable id="top-keys" rows={byCost(data.byKey)} label="Key" name={(r) => names[groupOf(r)] ?? groupOf(r)} />
        </div>
      </div>
      <h3>Holds in flight</h3>
      {holding.length === 0 ? (
        <p class="hint" data-holds="0">No request is holding credit right now.</p>
      ) : (
        <table class="holds" data-holds={holding.length}>
          <thead>
            <tr>
              <th>Key</th>
              <th class="num">Held</th>
              <th class="num">Available</th>
            </tr>
          </thead>
          <tbody>
            {holding.map((k) => (
              <tr key={k.id}>
                <td>{k.name}</td>
                <td class="num">{usd(k.held)}</td>
                <td class="num">{usd(k.available)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function SummaryTable({ id, rows, label, name }: { id: string; rows: UsageTotalsJson[]; label: string; name: (r: UsageTotalsJson) => string }) {
  if (rows.length === 0) return <p class="hint">No requests in this range.</p>;
  return (
    <table class={id}>
      <thead>
        <tr>
          <th>{label}</th>
          <th class="num">Requests</th>
          <th class="num">Tokens</th>
          <th class="num">Spend</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={name(r)} data-cost={String(r.cost)} data-requests={String(r.requests)}>
            <td>{name(r)}</td>
            <td class="num">{count(r.requests)}</td>
            <td class="num">{count(totalTokens(r))}</td>
            <td class="num">{usd(r.cost)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
