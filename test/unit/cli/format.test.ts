// How the command line's tables show money from a key object (JSON numbers in USD, as the admin API
// sends them): exactly, for every amount the ledger holds — never $0 for a large one, never 1e-7.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_NANO, nanoToUsd } from '../../../src/billing/money.js';
import { limitsText, usdFigure } from '../../../src/cli/format.js';

describe('usdFigure', () => {
  test('shows each boundary amount exactly', () => {
    assert.equal(usdFigure(nanoToUsd(0)), '$0');
    assert.equal(usdFigure(nanoToUsd(1)), '$0.000000001');
    assert.equal(usdFigure(nanoToUsd(100)), '$0.0000001');
    assert.equal(usdFigure(nanoToUsd(-2_500_000)), '$-0.0025');
    assert.equal(usdFigure(nanoToUsd(MAX_NANO - 1)), '$8388607.999999999');
    assert.equal(usdFigure(nanoToUsd(MAX_NANO)), '$8388608');
  });

  test('shows a balance past the maximum (one left from before the maximum) as it is, not as $0', () => {
    assert.equal(usdFigure(17_000_005.5), '$17000005.5');
  });
});

describe('limitsText', () => {
  test('writes a budget exactly, however small or large', () => {
    const limits = (budget: number) => ({ limits: { rpm: null, tpm: null, max_concurrent: null, budget, budget_period: 'day' } });
    assert.equal(limitsText(limits(nanoToUsd(100))), '$0.0000001/day');
    assert.equal(limitsText(limits(nanoToUsd(MAX_NANO - 1))), '$8388607.999999999/day');
  });
});
