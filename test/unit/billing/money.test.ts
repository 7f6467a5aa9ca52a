// Decimal USD ↔ integer nano-dollars: the only place money crosses between text/JSON and integers.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { formatUsd, MAX_NANO, MAX_USD, nanoToUsd, parseDecimal, readUsdAmount, usdToNano } from '../../../src/billing/money.js';

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

  test("rejects amounts past the ledger's maximum, of either sign", () => {
    assert.equal(usdToNano('8388608'), MAX_NANO);
    assert.equal(usdToNano('-8388608'), -MAX_NANO);
    assert.equal(usdToNano('8388608.000000001'), undefined);
    assert.equal(usdToNano('-8388608.000000001'), undefined);
    assert.equal(usdToNano('9007199.254740991'), undefined);
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

  test('prints a bigint of any size exactly (an amount past the maximum, named in a refusal)', () => {
    assert.equal(formatUsd(17_000_005_500_000_000n), '17000005.5');
    assert.equal(formatUsd(BigInt(MAX_NANO) + 1n), '8388608.000000001');
    assert.equal(formatUsd(-(2n ** 63n)), '-9223372036.854775808');
    assert.equal(formatUsd(0n), '0');
  });

  test('round-trips through usdToNano', () => {
    for (const text of ['0.15', '1.5', '12', '0.000000001', '-0.0025', '8388607.999999999', '8388608']) {
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

describe('the ledger maximum (MAX_NANO)', () => {
  test('is 2^23 US dollars, written as an operator would type it', () => {
    assert.equal(MAX_NANO, 2 ** 23 * 1e9);
    assert.equal(MAX_USD, formatUsd(MAX_NANO));
    assert.equal(MAX_USD, '8388608');
  });

  test('readUsdAmount reads every boundary exactly and refuses past the maximum with the amount', () => {
    assert.deepEqual(readUsdAmount('0'), { ok: true, nano: 0 });
    assert.deepEqual(readUsdAmount('0.000000001'), { ok: true, nano: 1 });
    assert.deepEqual(readUsdAmount(1e-9), { ok: true, nano: 1 });
    assert.deepEqual(readUsdAmount('8388607.999999999'), { ok: true, nano: MAX_NANO - 1 });
    assert.deepEqual(readUsdAmount('8388608'), { ok: true, nano: MAX_NANO });
    assert.deepEqual(readUsdAmount(8388608), { ok: true, nano: MAX_NANO });
    assert.deepEqual(readUsdAmount('-8388608'), { ok: true, nano: -MAX_NANO });
    assert.deepEqual(readUsdAmount('8388608.000000001'), { ok: false, reason: 'over_maximum', nano: BigInt(MAX_NANO) + 1n });
    assert.deepEqual(readUsdAmount('17000005.50'), { ok: false, reason: 'over_maximum', nano: 17_000_005_500_000_000n });
    assert.deepEqual(readUsdAmount('1e20'), { ok: false, reason: 'over_maximum', nano: 10n ** 29n });
    assert.deepEqual(readUsdAmount('0.0000000001'), { ok: false, reason: 'not_a_decimal' });
    assert.deepEqual(readUsdAmount('1e999999999'), { ok: false, reason: 'not_a_decimal' });
  });

  /** What a client reading the JSON number gets back: the exact decimal of its shortest form. */
  const throughJson = (nano: number): bigint | undefined => parseDecimal(JSON.parse(JSON.stringify(nanoToUsd(nano))) as number, 9);

  test('every amount up to the maximum survives the JSON number a client reads, to the nano-dollar', () => {
    for (const nano of [0, 1, 10, 999_999_999, 1_000_000_001, 17_000_005_500, MAX_NANO - 1, MAX_NANO]) {
      assert.equal(throughJson(nano), BigInt(nano), `${nano} nano`);
      assert.equal(throughJson(-nano), -BigInt(nano), `-${nano} nano`);
    }
    // The top of the range, where a double's spacing comes closest to a nano-dollar, every one of them.
    for (let nano = MAX_NANO - 2_000_000; nano <= MAX_NANO; nano++) {
      if (throughJson(nano) !== BigInt(nano)) assert.fail(`${nano} nano does not survive JSON`);
    }
    // And a spread of amounts across the whole range.
    let state = 7;
    for (let i = 0; i < 200_000; i++) {
      state = (state * 48271) % 2147483647;
      const nano = Math.floor((state / 2147483647) * MAX_NANO);
      if (throughJson(nano) !== BigInt(nano)) assert.fail(`${nano} nano does not survive JSON`);
    }
  });

  test('one nano-dollar past the maximum no longer does: why the maximum is where it is', () => {
    assert.equal(JSON.stringify(nanoToUsd(MAX_NANO + 1)), '8388608.000000002');
    assert.notEqual(throughJson(MAX_NANO + 1), BigInt(MAX_NANO + 1));
  });
});
