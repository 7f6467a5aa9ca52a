// Headline figures: a money amount (`data-usd` holds the exact amount the API gave) or a count.
import { count, usd } from '../format.js';

export function Figure({ label, usd: amount, id }: { label: string; usd: number; id: string }) {
  return (
    <div class="card" data-figure={id} data-usd={String(amount)}>
      <span class="label">{label}</span>
      <span class="value">{usd(amount)}</span>
    </div>
  );
}

export function CountFigure({ label, value, id, suffix = '' }: { label: string; value: number | null; id: string; suffix?: string }) {
  return (
    <div class="card" data-figure={id} data-value={value === null ? '' : String(value)}>
      <span class="label">{label}</span>
      <span class="value">{value === null ? '—' : `${count(value)}${suffix}`}</span>
    </div>
  );
}
