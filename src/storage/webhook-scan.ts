// The notification scan's rules, the same on both dialects (docs/adr/0052-signed-webhooks.md): from the
// accounts' and keys' rows and their markers, which markers flip and which events go with them. The store
// applies each flip as a conditional UPDATE (the marker still as read) and writes the event only when that
// UPDATE changed the row, all in one transaction: a crash loses nothing (the condition still holds and the
// marker did not move, so the next scan finds it) and two scanners never write one crossing twice.
import { periodStart, type BudgetPeriod } from '../billing/budget-period.js';
import { nanoToUsd, usdToNano, type Nano } from '../billing/money.js';
import type { NewWebhookEvent, NotificationScan } from './types.js';

const DAY_MS = 86_400_000;

/** An account's metadata key that sets its own `balance.low` threshold (USD; "off": none). */
export const BALANCE_LOW_METADATA = 'balance_low_usd';

export interface ScanAccountRow {
  readonly id: string;
  readonly name: string;
  readonly balance: number;
  readonly held: number;
  readonly metadata: string;
  readonly balance_low_notified: number;
  readonly budget: number | null;
  readonly budget_period: string | null;
  readonly budget_spent: number;
  readonly budget_period_start: number;
  readonly budget_notified_period: number | null;
}

export interface ScanKeyRow {
  readonly id: string;
  readonly account_id: string;
  readonly name: string;
  readonly expires_at: number | null;
  readonly expiry_notified: number;
  readonly budget: number | null;
  readonly budget_period: string | null;
  readonly budget_spent: number;
  readonly budget_period_start: number;
  readonly budget_notified_period: number | null;
}

export const SCAN_ACCOUNT_SQL =
  'SELECT id, name, balance, held, metadata, balance_low_notified, budget, budget_period, budget_spent, budget_period_start, budget_notified_period FROM accounts';
export const SCAN_KEY_SQL =
  "SELECT id, account_id, name, expires_at, expiry_notified, budget, budget_period, budget_spent, budget_period_start, budget_notified_period FROM api_keys WHERE status = 'active'";

/** One marker to move from `from` to `to` on one row, and the event written if it moved. */
export interface ScanFlip {
  readonly table: 'accounts' | 'api_keys';
  readonly id: string;
  readonly column: 'balance_low_notified' | 'budget_notified_period' | 'expiry_notified';
  readonly from: number | null;
  readonly to: number;
  readonly event?: NewWebhookEvent;
}

/** The account's threshold: its metadata's, else the default; null: none. */
export function balanceLowThreshold(metadata: string, fallback: Nano | null): Nano | null {
  let own: unknown;
  try {
    own = (JSON.parse(metadata) as Record<string, unknown>)[BALANCE_LOW_METADATA];
  } catch {
    own = undefined;
  }
  if (typeof own !== 'string' || own.trim() === '') return fallback;
  if (own.trim().toLowerCase() === 'off') return null;
  return usdToNano(own.trim()) ?? fallback;
}

function budgetFlip(
  table: 'accounts' | 'api_keys',
  row: ScanAccountRow | ScanKeyRow,
  limit: Nano | null,
  period: BudgetPeriod,
  now: number,
  data: Record<string, unknown>,
): ScanFlip | undefined {
  if (limit === null || limit <= 0) return undefined;
  const start = periodStart(now, period);
  if (row.budget_period_start !== start || row.budget_spent < limit || row.budget_notified_period === start) return undefined;
  return {
    table,
    id: row.id,
    column: 'budget_notified_period',
    from: row.budget_notified_period,
    to: start,
    event: {
      type: 'budget.reached',
      data: { ...data, budget_usd: nanoToUsd(limit), spent_usd: nanoToUsd(row.budget_spent), period, period_start: new Date(start).toISOString() },
    },
  };
}

export function accountFlips(rows: readonly ScanAccountRow[], scan: NotificationScan): ScanFlip[] {
  const flips: ScanFlip[] = [];
  for (const row of rows) {
    const threshold = balanceLowThreshold(row.metadata, scan.balanceLow);
    const available = row.balance - row.held;
    const low = threshold !== null && available < threshold;
    if (low && row.balance_low_notified === 0) {
      flips.push({
        table: 'accounts',
        id: row.id,
        column: 'balance_low_notified',
        from: 0,
        to: 1,
        event: {
          type: 'balance.low',
          data: { account_id: row.id, account_name: row.name, available_usd: nanoToUsd(available), threshold_usd: nanoToUsd(threshold) },
        },
      });
    } else if (!low && row.balance_low_notified !== 0) {
      flips.push({ table: 'accounts', id: row.id, column: 'balance_low_notified', from: row.balance_low_notified, to: 0 });
    }
    if (row.budget_period !== null) {
      const flip = budgetFlip('accounts', row, row.budget, row.budget_period as BudgetPeriod, scan.now, { scope: 'account', account_id: row.id, account_name: row.name });
      if (flip) flips.push(flip);
    }
  }
  return flips;
}

export function keyFlips(rows: readonly ScanKeyRow[], scan: NotificationScan): ScanFlip[] {
  const flips: ScanFlip[] = [];
  for (const row of rows) {
    const limit = row.budget ?? scan.keyBudget;
    const period = (row.budget_period as BudgetPeriod | null) ?? scan.keyBudgetPeriod;
    const flip = budgetFlip('api_keys', row, limit, period, scan.now, { scope: 'key', account_id: row.account_id, key_id: row.id, key_name: row.name });
    if (flip) flips.push(flip);
    const expiry = expiryFlip(row, scan.now);
    if (expiry) flips.push(expiry);
  }
  return flips;
}

/** 7: the 7-day notice is due (or was written); 1: the 1-day one; 0: neither (more than 7 days left, none, or expired). */
function expiryStage(expiresAt: number | null, now: number): 0 | 1 | 7 {
  if (expiresAt === null || expiresAt <= now) return 0;
  const left = expiresAt - now;
  if (left <= DAY_MS) return 1;
  if (left <= 7 * DAY_MS) return 7;
  return 0;
}

function expiryFlip(row: ScanKeyRow, now: number): ScanFlip | undefined {
  if (row.expires_at !== null && row.expires_at <= now) return undefined; // expired: its notices stand
  const stage = expiryStage(row.expires_at, now);
  const marker = row.expiry_notified;
  if (stage === marker) return undefined;
  const base = { table: 'api_keys' as const, id: row.id, column: 'expiry_notified' as const, from: marker };
  // The expiry moved later (a key extended): re-armed, no event.
  if (stage === 0 || (stage === 7 && marker === 1)) return { ...base, to: stage };
  const event: NewWebhookEvent = {
    type: 'key.expiring',
    data: { key_id: row.id, account_id: row.account_id, key_name: row.name, expires_at: new Date(row.expires_at!).toISOString(), days_ahead: stage },
  };
  return { ...base, to: stage, event };
}
