// Budget periods (product.md §8): a UTC day, an ISO week (Monday 00:00 UTC) or a calendar month (the 1st,
// 00:00 UTC). Spend is counted per period; a new period starts clean at its boundary.

export type BudgetPeriod = 'day' | 'week' | 'month';

export const BUDGET_PERIODS: readonly BudgetPeriod[] = ['day', 'week', 'month'];

const DAY_MS = 86_400_000;

/** The last period computed, per kind: nearly every request falls in it, and needs no Date object. */
const lastPeriod: Record<BudgetPeriod, { start: number; end: number }> = {
  day: { start: 0, end: 0 },
  week: { start: 0, end: 0 },
  month: { start: 0, end: 0 },
};

/** Epoch ms at which the period containing `now` began. */
export function periodStart(now: number, period: BudgetPeriod): number {
  const last = lastPeriod[period];
  if (now >= last.start && now < last.end) return last.start;
  const start = computePeriodStart(now, period);
  lastPeriod[period] = { start, end: nextPeriodStart(now, period) };
  return start;
}

function computePeriodStart(now: number, period: BudgetPeriod): number {
  const date = new Date(now);
  const midnight = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  if (period === 'day') return midnight;
  if (period === 'week') return midnight - ((date.getUTCDay() + 6) % 7) * DAY_MS;
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

/** Epoch ms at which the period after the one containing `now` begins (when the budget resets). */
export function nextPeriodStart(now: number, period: BudgetPeriod): number {
  const start = computePeriodStart(now, period);
  if (period === 'day') return start + DAY_MS;
  if (period === 'week') return start + 7 * DAY_MS;
  const date = new Date(start);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}
