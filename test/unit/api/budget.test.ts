// The output a chat completion may produce, for its hold.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { resolveMaxOutput } from '../../../src/api/openai-chat/budget.js';

describe('resolveMaxOutput', () => {
  test('prefers max_completion_tokens over max_tokens', () => {
    assert.equal(resolveMaxOutput({ max_completion_tokens: 100, max_tokens: 50 }, 16_384), 100);
    assert.equal(resolveMaxOutput({ max_completion_tokens: 30, max_tokens: 500 }, 16_384), 30);
  });

  test('uses max_tokens when max_completion_tokens is absent or null', () => {
    assert.equal(resolveMaxOutput({ max_tokens: 50 }, 16_384), 50);
    assert.equal(resolveMaxOutput({ max_completion_tokens: null, max_tokens: 70 }, 16_384), 70);
  });

  test("falls back to the model's max_output_tokens", () => {
    assert.equal(resolveMaxOutput({}, 16_384), 16_384);
    assert.equal(resolveMaxOutput({ max_tokens: null }, 8192), 8192);
  });

  test("never exceeds the model's max_output_tokens", () => {
    assert.equal(resolveMaxOutput({ max_tokens: 1_000_000 }, 16_384), 16_384);
    assert.equal(resolveMaxOutput({ max_completion_tokens: 20_000, max_tokens: 10 }, 16_384), 16_384);
  });
});
