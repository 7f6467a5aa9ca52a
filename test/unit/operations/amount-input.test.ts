// Amounts an operator types or sends (a top-up, an adjustment, an opening balance, a budget), at their
// boundaries: 0, one nano-dollar, the maximum the ledger holds, and one nano-dollar past it — refused
// with a 400 that names the field and the maximum.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_NANO } from '../../../src/billing/money.js';
import { isGatewayError } from '../../../src/errors.js';
import { boundedUsd, usdAmount } from '../../../src/operations/amount-input.js';
import { toLimitsPatch } from '../../../src/operations/limits-input.js';

/** Asserts a 400 invalid_request naming `param`, whose message matches `message`. */
function assertRefused(fn: () => unknown, param: string, message: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(isGatewayError(error), String(error));
    assert.equal(error.code, 'invalid_request');
    assert.equal(error.status, 400);
    assert.equal(error.param, param);
    assert.match(error.message, message);
    return true;
  });
}

const PAST_MAXIMUM = /is past 8388608 USD, the largest amount the ledger holds/;

describe('usdAmount', () => {
  test('reads every amount from one nano-dollar up to the maximum exactly', () => {
    assert.equal(usdAmount('amount', '0.000000001', { allowZero: false }), 1);
    assert.equal(usdAmount('amount', 1e-9, { allowZero: false }), 1);
    assert.equal(usdAmount('balance', '0', { allowZero: true }), 0);
    assert.equal(usdAmount('amount', '8388607.999999999', { allowZero: false }), MAX_NANO - 1);
    assert.equal(usdAmount('amount', '8388608', { allowZero: false }), MAX_NANO);
    assert.equal(usdAmount('amount', 8388608, { allowZero: false }), MAX_NANO);
    assert.equal(usdAmount('amount', '-8388608', { allowZero: false, allowNegative: true }), -MAX_NANO);
  });

  test('refuses one nano-dollar past the maximum, naming the maximum and the amount', () => {
    assertRefused(() => usdAmount('amount', '8388608.000000001', { allowZero: false }), 'amount', /^Invalid 'amount': 8388608\.000000001 USD is past 8388608 USD/);
    assertRefused(() => usdAmount('balance', '17000005.50', { allowZero: true }), 'balance', /17000005\.5 USD is past 8388608 USD, the largest amount the ledger holds/);
    assertRefused(() => usdAmount('amount', 1e20, { allowZero: false }), 'amount', PAST_MAXIMUM);
    assertRefused(() => usdAmount('amount', '-8388608.000000001', { allowZero: false, allowNegative: true }), 'amount', PAST_MAXIMUM);
  });

  test('refuses a wrong sign or zero for its sign, whatever its size', () => {
    assertRefused(() => usdAmount('amount', '-17000005.5', { allowZero: false }), 'amount', /expected a positive USD amount/);
    assertRefused(() => usdAmount('amount', '0', { allowZero: false }), 'amount', /expected a positive USD amount/);
    assertRefused(() => usdAmount('amount', '0', { allowZero: false, allowNegative: true }), 'amount', /expected a non-zero USD amount \(negative takes credit away\)/);
    assertRefused(() => usdAmount('balance', '-1', { allowZero: true }), 'balance', /expected a non-negative USD amount/);
  });

  test('refuses what is not a decimal with at most 9 places', () => {
    for (const bad of ['0.0000000001', 'ten', '', '1,000', null, undefined, {}, '1e999999999']) {
      assertRefused(() => usdAmount('amount', bad, { allowZero: false }), 'amount', /expected a positive USD amount with at most 9 decimals/);
    }
  });
});

describe('boundedUsd', () => {
  test('gives the amount, undefined for a non-decimal, and refuses past the maximum', () => {
    assert.equal(boundedUsd('budget', '8388608'), MAX_NANO);
    assert.equal(boundedUsd('budget', 'lots'), undefined);
    assertRefused(() => boundedUsd('budget', '8388608.000000001'), 'budget', PAST_MAXIMUM);
  });
});

describe('a budget', () => {
  test('may be the maximum, and not one nano-dollar more', () => {
    assert.equal(toLimitsPatch({ budget: '8388608' }, 0).budget, MAX_NANO);
    assertRefused(() => toLimitsPatch({ budget: '8388608.000000001' }, 0), 'budget', PAST_MAXIMUM);
    assertRefused(() => toLimitsPatch({ budget: '-1' }, 0), 'budget', /expected a non-negative USD amount/);
  });
});
