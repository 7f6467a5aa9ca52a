// Reading what an operator or a holder sends about redemption codes (docs/adr/0051-redemption-codes.md):
// the count, the status filter, the code a holder types, and the code objects and CSV records — each bad
// value a 400 naming its field, before anything is stored.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isGatewayError } from '../../../src/errors.js';
import { generateRedemptionCode, looksLikeRedemptionCode, redemptionCodePrefix } from '../../../src/keys/secret.js';
import { codeCount, codeCsvRecord, codeObject, codeStatus, codeStatusOf, CODE_CSV_COLUMNS, MAX_CODES_PER_BATCH, redeemableCode, withoutCodes } from '../../../src/operations/codes.js';
import type { CodeRecord } from '../../../src/storage/types.js';

function refusedFor(param: string, run: () => unknown): void {
  assert.throws(run, (error: unknown) => isGatewayError(error) && error.code === 'invalid_request' && error.toBody().error.param === param);
}

const T0 = Date.parse('2026-01-01T00:00:00Z');
const code: CodeRecord = {
  id: 'rc_1',
  prefix: 'tgr-abcdef',
  amount: 2_500_000_001,
  accountId: null,
  expiresAt: T0 + 1_000,
  batchId: 'batch_1',
  note: 'a, "quoted" note',
  createdAt: new Date(T0).toISOString(),
  redeemedAt: null,
  redeemedAccountId: null,
  redeemedKeyId: null,
  revokedAt: null,
};

describe('redemption code shape', () => {
  test('a new code is tgr- and 32 base32 letters (160 bits); every one differs; its prefix is 10 characters', () => {
    const codes = new Set(Array.from({ length: 200 }, generateRedemptionCode));
    assert.equal(codes.size, 200);
    for (const c of codes) {
      assert.match(c, /^tgr-[a-z2-7]{32}$/);
      assert.ok(looksLikeRedemptionCode(c));
      assert.equal(redemptionCodePrefix(c), c.slice(0, 10));
    }
  });

  test('a code is read trimmed and case-insensitively; anything else is a 400 on code', () => {
    const c = generateRedemptionCode();
    assert.equal(redeemableCode(`  ${c.toUpperCase()}\n`), c);
    for (const bad of [undefined, 42, '', 'tgr-', `tg-${c.slice(4)}`, `${c}a`, c.slice(0, -1), `tgr-${'0'.repeat(32)}`, `tgr-${'1'.repeat(32)}`]) {
      refusedFor('code', () => redeemableCode(bad));
    }
  });
});

describe('codes create and list input', () => {
  test('count: a whole number from 1 to the batch maximum, a flag string too', () => {
    assert.equal(codeCount(1), 1);
    assert.equal(codeCount('25'), 25);
    assert.equal(codeCount(MAX_CODES_PER_BATCH), MAX_CODES_PER_BATCH);
    for (const bad of [0, -1, 1.5, '1e3', 'ten', null, MAX_CODES_PER_BATCH + 1, '']) refusedFor('count', () => codeCount(bad));
  });

  test('status: unused, redeemed, revoked or expired', () => {
    for (const s of ['unused', 'redeemed', 'revoked', 'expired']) assert.equal(codeStatusOf(s), s);
    assert.equal(codeStatusOf(undefined), undefined);
    for (const bad of ['used', 'UNUSED', 1, null]) refusedFor('status', () => codeStatusOf(bad));
  });
});

describe('code objects', () => {
  test('status is decided at now: unused before the expiry, expired at it; redeemed and revoked win', () => {
    assert.equal(codeStatus(code, T0), 'unused');
    assert.equal(codeStatus(code, T0 + 1_000), 'expired');
    assert.equal(codeStatus({ ...code, redeemedAt: T0 }, T0 + 5_000), 'redeemed');
    assert.equal(codeStatus({ ...code, revokedAt: T0 }, T0 + 5_000), 'revoked');
  });

  test('the object and the CSV record carry the prefix, never a code; the amount is exact', () => {
    const object = codeObject(code, T0);
    assert.equal(object.prefix, 'tgr-abcdef');
    assert.equal(object.amount, 2.500000001);
    assert.equal(object.expires_at, '2026-01-01T00:00:01.000Z');
    const record = codeCsvRecord(object);
    assert.equal(record.length, CODE_CSV_COLUMNS.length);
    assert.equal(record[CODE_CSV_COLUMNS.indexOf('amount')], '2.500000001');
    assert.equal(record[CODE_CSV_COLUMNS.indexOf('redeemed_at')], '');
    const batch = { object: 'redemption_code_batch' as const, batch_id: 'b', count: 1, amount: 1, codes: [{ ...object, code: 'tgr-x' }] };
    assert.deepEqual(withoutCodes(batch).codes.map((c) => c.code), [null]);
    assert.equal(batch.codes[0]!.code, 'tgr-x', 'the answer itself keeps its codes');
  });
});

describe('redeemCode', () => {
  test('a database that does not answer is 503 ledger_unavailable with Retry-After: nothing was redeemed, a retry may succeed', async () => {
    const { redeemCode } = await import('../../../src/operations/codes.js');
    const store = { codes: { redeem: () => Promise.reject(new Error('connection refused')) } } as unknown as Parameters<typeof redeemCode>[0];
    const account = { id: 'acct_a', balance: 0 } as Parameters<typeof redeemCode>[1];
    await assert.rejects(redeemCode(store, account, null, generateRedemptionCode()), (error: unknown) => {
      assert.ok(isGatewayError(error));
      assert.equal(error.code, 'ledger_unavailable');
      assert.equal(error.status, 503);
      assert.equal(error.headers?.['retry-after'], '1');
      return true;
    });
  });
});
