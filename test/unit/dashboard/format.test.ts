// The dashboard's money figures (dashboard/src/format.ts), fed the JSON numbers the admin API sends:
// exact to the nano-dollar for every amount the ledger holds, with thousands separators.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { usd } from '../../../dashboard/src/format.js';
import { MAX_NANO, nanoToUsd } from '../../../src/billing/money.js';

/** The figure the page shows for an amount, as it arrives: through JSON. */
const shown = (nano: number) => usd(JSON.parse(JSON.stringify(nanoToUsd(nano))) as number);

describe('usd', () => {
  test('shows each boundary amount exactly', () => {
    assert.equal(shown(0), '$0.00');
    assert.equal(shown(1), '$0.000000001');
    assert.equal(shown(1_500_000_000), '$1.50');
    assert.equal(shown(-2_500_000), '−$0.0025');
    assert.equal(shown(MAX_NANO - 1), '$8,388,607.999999999');
    assert.equal(shown(MAX_NANO), '$8,388,608.00');
  });

  test('shows every amount near the maximum to the nano-dollar', () => {
    for (let nano = MAX_NANO - 200_000; nano <= MAX_NANO; nano++) {
      const fraction = String(nano % 1e9).padStart(9, '0').replace(/0+$/, '').padEnd(2, '0');
      const expected = `$${Math.floor(nano / 1e9).toLocaleString('en-US')}.${fraction}`;
      if (shown(nano) !== expected) assert.fail(`${nano} nano shows as ${shown(nano)}, not ${expected}`);
    }
  });

  test('shows nothing for a missing figure', () => {
    assert.equal(usd(null), '—');
    assert.equal(usd(undefined), '—');
  });
});
