// Decimal USD ↔ integer nano-dollars: the only place money crosses between text/JSON and integers.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { formatUsd, nanoToUsd, parseDecimal, usdToNano } from '../../../src/billing/money.js';

describe('parseDecimal', () => {
  test('reads a decimal string exactly at the given scale', () => {
    assert.equal(parseDecimal('0.15', 9), 150_000_000n);
    assert.equal(parseDecimal('12', 9), 12_000_000_000n);
    assert.equal(parseDecimal('12.5', 2), 1250n);
    assert.equal(parseDecimal('0.000000001', 9), 1n);
  });

  test('reads a JSON number through its shortest decimal form, without float error', () => {
    assert.equal(parseDecimal(0.075, 9), 75_000_000n);
    assert.equal(parseDecimal(0.1, 9), 100_000_000n);
    assert.equal(parseDecimal(1.1, 9), 1_100_000_000n);
    assert.equal(parseDecimal(4.4, 9), 4_400_000_000n);
    assert.equal(parseDecimal(1e-7, 9), 100n);
  });

  test('reads exponent notation', () => {
    assert.equal(parseDecimal('1e-3', 9), 1_000_000n);
    assert.equal(parseDecimal('2.5E2', 9), 250_000_000_000n);
    assert.equal(parseDecimal('1e+2', 0), 100n);
  });

  test('accepts trailing zeros beyond the scale', () => {
    assert.equal(parseDecimal('0.1500000000', 9), 150_000_000n);
    assert.equal(parseDecimal('1.000000000000', 9), 1_000_000_000n);
  });

  test('rejects a value that needs more decimals than the scale', () => {
    assert.equal(parseDecimal('0.0000000001', 9), undefined);
    assert.equal(parseDecimal('0.1234567891', 9), undefined);
    assert.equal(parseDecimal(1e-10, 9), undefined);
    assert.equal(parseDecimal('0.005', 2), undefined);
  });

  test('keeps the sign of a negative amount', () => {
    assert.equal(parseDecimal('-1.5', 9), -1_500_000_000n);
    assert.equal(parseDecimal(-0.25, 9), -250_000_000n);
    assert.equal(parseDecimal('+2', 9), 2_000_000_000n);
  });

  test('ignores surrounding whitespace in a string', () => {
    assert.equal(parseDecimal('  3.5 ', 9), 3_500_000_000n);
  });

  test('rejects anything that is not a finite decimal', () => {
    for (const garbage of ['', ' ', 'abc', '1.2.3', '.', '-', 'e5', '1e', '0x10', '1,5', '$1', '1 000', 'NaN', 'Infinity']) {
      assert.equal(parseDecimal(garbage, 9), undefined, JSON.stringify(garbage));
    }
    assert.equal(parseDecimal(Number.NaN, 9), undefined);
    assert.equal(parseDecimal(Number.POSITIVE_INFINITY, 9), undefined);
  });
});

describe('usdToNano', () => {
  test('converts dollars to integer nano-dollars', () => {
    assert.equal(usdToNano('0.15'), 150_000_000);
    assert.equal(usdToNano(0.075), 75_000_000);
    assert.equal(usdToNano('1e-3'), 1_000_000);
    assert.equal(usdToNano('12'), 12_000_000_000);
    assert.equal(usdToNano(0), 0);
    assert.equal(usdToNano('0.000000001'), 1);
  });

  test('accepts trailing zeros and rejects a tenth decimal', () => {
    assert.equal(usdToNano('5.500000000000'), 5_500_000_000);
    assert.equal(usdToNano('0.0000000005'), undefined);
  });

  test('converts negative amounts to negative nano-dollars', () => {
    assert.equal(usdToNano('-2'), -2_000_000_000);
  });

  test('rejects garbage', () => {
    assert.equal(usdToNano('ten'), undefined);
    assert.equal(usdToNano(''), undefined);
    assert.equal(usdToNano(Number.NaN), undefined);
  });

  test('rejects amounts outside the safe integer range of nano-dollars', () => {
    assert.equal(usdToNano('9007199.254740991'), Number.MAX_SAFE_INTEGER);
    assert.equal(usdToNano('9007199.254740992'), undefined);
    assert.equal(usdToNano('-9007199.254740992'), undefined);
  });

  test('rejects an amount written with a huge exponent instead of throwing', () => {
    // `tollgate keys topup ID 1e999999999` must be refused as an invalid amount, not crash.
    assert.equal(usdToNano('1e999999999'), undefined);
    assert.equal(usdToNano('1e20'), undefined);
  });
});

describe('formatUsd', () => {
  test('prints an exact decimal with trailing zeros trimmed', () => {
    assert.equal(formatUsd(1_500_000_000), '1.5');
    assert.equal(formatUsd(12_000_000_000), '12');
    assert.equal(formatUsd(150_000_000), '0.15');
    assert.equal(formatUsd(1), '0.000000001');
    assert.equal(formatUsd(0), '0');
    assert.equal(formatUsd(1_000_000_010), '1.00000001');
  });

  test('prints a negative balance with a minus sign', () => {
    assert.equal(formatUsd(-2_500_000), '-0.0025');
    assert.equal(formatUsd(-3_000_000_000), '-3');
  });

  test('prints the largest safe amount exactly', () => {
    assert.equal(formatUsd(Number.MAX_SAFE_INTEGER), '9007199.254740991');
  });

  test('round-trips through usdToNano', () => {
    for (const text of ['0.15', '1.5', '12', '0.000000001', '-0.0025', '9007199.254740991']) {
      assert.equal(formatUsd(usdToNano(text)!), text);
    }
  });
});

describe('nanoToUsd', () => {
  test('gives the nearest JSON number in dollars', () => {
    assert.equal(nanoToUsd(150_000_000), 0.15);
    assert.equal(nanoToUsd(1), 1e-9);
    assert.equal(nanoToUsd(-500_000_000), -0.5);
    assert.equal(nanoToUsd(0), 0);
    assert.equal(nanoToUsd(12_345_678_901), 12.345678901);
  });
});
