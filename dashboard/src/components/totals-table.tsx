// The totals of a usage summary, one row per group (a session, key, model, client API): requests, failed
// ones, tokens and cost, exactly as the summary gives them (`data-cost` holds the API's figure).
import { count, usd } from '../format.js';
import { totalTokens } from '../summary.js';
import type { UsageTotalsJson } from '../types.js';

export interface TotalsTableProps {
  rows: readonly UsageTotalsJson[];
  /** The group column's heading (Session, Key, Model, API). */
  label: string;
  /** A group's own page, when it has one. */
  link?: (group: string) => string;
  /** How a group reads (a key's name for its id); the group itself unless told. */
  names?: Record<string, string>;
  /** Tells the table apart from others on the page. */
  id?: string;
}

export function TotalsTable({ rows, label, link, names = {}, id }: TotalsTableProps) {
  return (
    <div class="table-scroll">
      <table class="totals" data-totals={id}>
        <thead>
          <tr>
            <th>{label}</th>
            <th class="num">Requests</th>
            <th class="num">Failed</th>
            <th class="num">Tokens</th>
            <th class="num">Cost</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.group ?? ''} data-group={r.group ?? ''} data-cost={String(r.cost)}>
              <td title={r.group ?? undefined}>{r.group === null ? '—' : link ? <a href={link(r.group)}>{names[r.group] ?? r.group}</a> : (names[r.group] ?? r.group)}</td>
              <td class="num">{count(r.requests)}</td>
              <td class="num">{count(r.errors)}</td>
              <td class="num">{count(totalTokens(r))}</td>
              <td class="num cost">{usd(r.cost)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
