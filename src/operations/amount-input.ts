// Reading a USD amount an operator typed or sent (a top-up, an adjustment, an initial balance, a budget): a
// decimal with at most 9 places (nano-dollars), never past the ledger's maximum (MAX_NANO, either sign). A
// bad one is 400 invalid_request naming the field; one past the maximum also names the maximum.
import { formatUsd, MAX_USD, readUsdAmount, type Nano } from '../billing/money.js';
import { GatewayError } from '../errors.js';

export interface AmountRules {
  readonly allowZero: boolean;
  /** An adjustment: either sign. */
  readonly allowNegative?: boolean;
}

function invalid(field: string, message: string): never {
  throw new GatewayError('invalid_request', { param: field, message: `Invalid '${field}': ${message}` });
}

function pastMaximum(field: string, nano: bigint): never {
  invalid(field, `${formatUsd(nano)} USD is past ${MAX_USD} USD, the largest amount the ledger holds.`);
}

/**
 * The nano-dollars of `value`, or undefined when it is not a decimal with at most 9 places; one past the
 * maximum is refused here, with the maximum named, whatever the field's own wording for a bad value.
 */
export function boundedUsd(field: string, value: unknown): Nano | undefined {
  if (typeof value !== 'number' && typeof value !== 'string') return undefined;
  const reading = readUsdAmount(value);
  if (reading.ok) return reading.nano;
  if (reading.reason === 'over_maximum') pastMaximum(field, reading.nano);
  return undefined;
}

export function usdAmount(field: string, value: unknown, rules: AmountRules): Nano {
  const reading = typeof value === 'number' || typeof value === 'string' ? readUsdAmount(value) : undefined;
  // The sign and zero rules come first: "-1e30" for a top-up is refused for its sign, not its size.
  const amount = !reading ? undefined : reading.ok ? reading.nano : reading.reason === 'over_maximum' ? reading.nano : undefined;
  if (amount === undefined || (amount < 0 && !rules.allowNegative) || (amount === 0 && !rules.allowZero)) {
    const kind = rules.allowNegative ? 'non-zero' : rules.allowZero ? 'non-negative' : 'positive';
    const sign = rules.allowNegative ? ' (negative takes credit away)' : '';
    invalid(field, `expected a ${kind} USD amount${sign} with at most 9 decimals, got ${JSON.stringify(value)}.`);
  }
  if (typeof amount === 'bigint') pastMaximum(field, amount);
  return amount;
}
