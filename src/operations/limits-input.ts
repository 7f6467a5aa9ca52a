// Reading a change to a key's limits and expiry, whichever face it comes from (CLI flags, admin API JSON):
// a field left out stays as it is, null (`none` on the command line) clears the key's own value — the
// config's `limits:` default then applies. Bad values are 400 invalid_request naming the field.
import { BUDGET_PERIODS, type BudgetPeriod } from '../billing/budget-period.js';
import { GatewayError } from '../errors.js';
import { boundedUsd } from './amount-input.js';
import type { LimitsPatch } from '../storage/types.js';

export interface LimitsInput {
  readonly rpm?: unknown;
  readonly tpm?: unknown;
  readonly max_concurrent?: unknown;
  readonly budget?: unknown;
  readonly budget_period?: unknown;
  readonly expires_at?: unknown;
  /** Lower an unaffordable max_tokens instead of refusing (product.md §13): true/false, or on/off. */
  readonly clamp_max_tokens?: unknown;
  /** USD the key may ever spend (docs/adr/0047-accounts.md); null clears it. */
  readonly credit_limit?: unknown;
}

const RELATIVE = /^(\d+)\s*([smhd])$/;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

function invalid(field: string, message: string): never {
  throw new GatewayError('invalid_request', { param: field, message: `Invalid '${field}': ${message}` });
}

function count(field: string, value: unknown): number | null {
  if (value === null) return null;
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) invalid(field, 'expected a positive integer, or none');
  return n;
}

function budgetOf(value: unknown): number | null {
  if (value === null) return null;
  const nano = boundedUsd('budget', value);
  if (nano === undefined || nano < 0) invalid('budget', 'expected a non-negative USD amount with at most 9 decimals, or none');
  return nano;
}

function creditLimitOf(value: unknown): number | null {
  if (value === null) return null;
  const nano = boundedUsd('credit_limit', value);
  if (nano === undefined || nano < 0) invalid('credit_limit', 'expected a non-negative USD amount with at most 9 decimals, or none');
  return nano;
}

function periodOf(value: unknown): BudgetPeriod | null {
  if (value === null) return null;
  if (typeof value !== 'string' || !BUDGET_PERIODS.includes(value as BudgetPeriod)) invalid('budget_period', 'expected day, week or month');
  return value as BudgetPeriod;
}

function flagOf(field: string, value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  const text = typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (text === 'on' || text === 'true') return true;
  if (text === 'off' || text === 'false') return false;
  invalid(field, 'expected true or false (on or off)');
}

/** An ISO 8601 time or a duration from now (`30d`, `12h`, `45m`, `90s`); it must lie in the future. */
export function parseExpiry(value: unknown, now: number): number | null {
  if (value === null) return null;
  if (typeof value !== 'string' || value.trim() === '') invalid('expires_at', 'expected an ISO 8601 time or a duration such as 30d or 12h, or none');
  const relative = RELATIVE.exec(value.trim());
  const at = relative ? now + Number(relative[1]) * UNIT_MS[relative[2] as keyof typeof UNIT_MS] : Date.parse(value);
  if (!Number.isFinite(at)) invalid('expires_at', `"${value}" is neither an ISO 8601 time nor a duration such as 30d or 12h`);
  if (at <= now) invalid('expires_at', `${new Date(at).toISOString()} is not in the future`);
  return at;
}

export { budgetOf, periodOf };

export function toLimitsPatch(input: LimitsInput, now: number): LimitsPatch {
  const patch: { -readonly [F in keyof LimitsPatch]: LimitsPatch[F] } = {};
  if (input.rpm !== undefined) patch.rpm = count('rpm', input.rpm);
  if (input.tpm !== undefined) patch.tpm = count('tpm', input.tpm);
  if (input.max_concurrent !== undefined) patch.maxConcurrent = count('max_concurrent', input.max_concurrent);
  if (input.budget !== undefined) patch.budget = budgetOf(input.budget);
  if (input.budget_period !== undefined) patch.budgetPeriod = periodOf(input.budget_period);
  if (input.expires_at !== undefined) patch.expiresAt = parseExpiry(input.expires_at, now);
  if (input.clamp_max_tokens !== undefined) patch.clampMaxTokens = flagOf('clamp_max_tokens', input.clamp_max_tokens);
  if (input.credit_limit !== undefined) patch.creditLimit = creditLimitOf(input.credit_limit);
  return patch;
}
