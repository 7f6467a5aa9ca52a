// Reading a USD amount an operator typed or sent (a top-up, an initial balance): a decimal with at most 9
// places (nano-dollars), positive unless zero is allowed. A bad one is 400 invalid_request naming the field.
import { usdToNano, type Nano } from '../billing/money.js';
import { GatewayError } from '../errors.js';

export function usdAmount(field: string, value: unknown, options: { allowZero: boolean }): Nano {
  const nano = typeof value === 'number' || typeof value === 'string' ? usdToNano(value) : undefined;
  if (nano === undefined || nano < 0 || (!options.allowZero && nano === 0)) {
    const kind = options.allowZero ? 'non-negative' : 'positive';
    throw new GatewayError('invalid_request', {
      param: field,
      message: `Invalid '${field}': expected a ${kind} USD amount with at most 9 decimals, got ${JSON.stringify(value)}.`,
    });
  }
  return nano;
}
