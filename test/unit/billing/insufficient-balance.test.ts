// The 402 answer: hold, available and the largest max_tokens that would have fitted.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { insufficientBalanceError } from '../../../src/billing/insufficient-balance.js';
import { sizeChatHold, sizeEmbeddingHold, type PriceRates } from '../../../src/billing/pricing.js';

const RATES: PriceRates = { input: 150_000_000n, output: 600_000_000n, cachedInput: 75_000_000n };

describe('insufficientBalanceError', () => {
  test('names max_tokens as the cause when the input alone fits', () => {
    // input 1000 = 150_000 nano; max_out 16384 → hold 150_000 + 9_830_400 = 9_980_400 nano
    const hold = sizeChatHold(RATES, 1000, 16_384, 1);
    assert.equal(hold, 9_980_400);
    const error = insufficientBalanceError({ rates: RATES, inputTokens: 1000, n: 1, hold, modelMaxOutput: 16_384 }, 1_000_000);
    assert.equal(error.code, 'insufficient_balance');
    assert.equal(error.status, 402);
    assert.equal(error.param, 'max_tokens');
    assert.deepEqual(error.metadata, { hold: 0.0099804, available: 0.001, affordable_max_tokens: 1416 });
    const body = error.toBody();
    assert.deepEqual(Object.keys(body.error), ['message', 'type', 'param', 'code', 'metadata']);
    assert.equal(body.error.code, 'insufficient_balance');
    assert.equal(body.error.param, 'max_tokens');
  });

  test('gives metadata as USD, USD and an integer', () => {
    const hold = sizeChatHold(RATES, 1000, 500, 2);
    const error = insufficientBalanceError({ rates: RATES, inputTokens: 1000, n: 2, hold, modelMaxOutput: 16_384 }, 400_000);
    const metadata = error.metadata as { hold: number; available: number; affordable_max_tokens: number };
    assert.equal(metadata.hold, 0.00075);
    assert.equal(metadata.available, 0.0004);
    // (400_000 − 150_000) nano / (600 nano × 2) per token = 208.3
    assert.equal(metadata.affordable_max_tokens, 208);
    assert.ok(Number.isInteger(metadata.affordable_max_tokens));
  });

  test('has a null param and affordable 0 when even the input does not fit', () => {
    const hold = sizeChatHold(RATES, 1000, 100, 1);
    const error = insufficientBalanceError({ rates: RATES, inputTokens: 1000, n: 1, hold, modelMaxOutput: 16_384 }, 149_999);
    assert.equal(error.param, null);
    assert.deepEqual(error.metadata, { hold: 0.00021, available: 0.000149999, affordable_max_tokens: 0 });
    assert.equal(error.toBody().error.param, null);
  });

  test('gives affordable 0 and a null param for embeddings (no output side)', () => {
    const rates: PriceRates = { input: 20_000_000n, output: 0n, cachedInput: 20_000_000n };
    const hold = sizeEmbeddingHold(rates, 50_000);
    assert.equal(hold, 1_000_000);
    const error = insufficientBalanceError({ rates, inputTokens: 50_000, n: 1, hold, modelMaxOutput: undefined }, 999_999);
    assert.equal(error.param, null);
    assert.deepEqual(error.metadata, { hold: 0.001, available: 0.000999999, affordable_max_tokens: 0 });
  });

  test('states the hold and the available amount in the message, never a negative available', () => {
    const hold = sizeChatHold(RATES, 1000, 100, 1);
    const error = insufficientBalanceError({ rates: RATES, inputTokens: 1000, n: 1, hold, modelMaxOutput: 16_384 }, -500_000);
    assert.match(error.message, /\$0\.00021\b/);
    assert.match(error.message, /\$0 available/);
    assert.equal(error.param, null);
    assert.equal((error.metadata as { affordable_max_tokens: number }).affordable_max_tokens, 0);
  });
});
