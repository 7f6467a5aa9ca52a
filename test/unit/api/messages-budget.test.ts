// The output side of a Messages hold and the clamp (product.md §13, §14): max_tokens bounded by the
// model's max_output_tokens; a clamp lowers max_tokens and an extended-thinking budget below it, and drops
// manual thinking that no longer fits Anthropic's 1,024-token minimum.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { messagesOutputBudget, withMaxTokens } from '../../../src/api/anthropic-messages/budget.js';
import type { MessagesRequestBody } from '../../../src/api/anthropic-messages/validate.js';
import { rawTextOf, withRawText } from '../../../src/api/raw-body.js';

const body = (extra: Record<string, unknown> = {}): MessagesRequestBody => ({ model: 'claude-test', max_tokens: 32_000, messages: [{ role: 'user', content: 'Hi' }], ...extra });

describe('messagesOutputBudget', () => {
  test('is max_tokens, one choice, never above the model maximum', () => {
    assert.deepEqual(messagesOutputBudget(body({ max_tokens: 500 }), 4000), { maxOutput: 500, choices: 1 });
    assert.deepEqual(messagesOutputBudget(body(), 4000), { maxOutput: 4000, choices: 1 });
  });
});

describe('withMaxTokens (a clamp)', () => {
  test('lowers max_tokens in a copy that no longer carries the client text', () => {
    const original = withRawText(body(), '{"model":"claude-test"}');
    const clamped = withMaxTokens(original, 900);
    assert.equal(clamped.max_tokens, 900);
    assert.equal(original.max_tokens, 32_000);
    assert.equal(rawTextOf(clamped), undefined, 'a changed body is serialised, never forwarded as the client sent it');
  });

  test('lowers a thinking budget that would not stay below max_tokens', () => {
    const thinking = { type: 'enabled', budget_tokens: 31_999 };
    assert.deepEqual(withMaxTokens(body({ thinking }), 5000).thinking, { type: 'enabled', budget_tokens: 4999 });
    assert.deepEqual(withMaxTokens(body({ thinking: { type: 'enabled', budget_tokens: 2000 } }), 5000).thinking, { type: 'enabled', budget_tokens: 2000 });
    assert.deepEqual(withMaxTokens(body({ thinking }), 1025).thinking, { type: 'enabled', budget_tokens: 1024 });
  });

  test('drops manual thinking under 1,025 max_tokens, leaves adaptive or disabled thinking alone', () => {
    assert.equal('thinking' in withMaxTokens(body({ thinking: { type: 'enabled', budget_tokens: 31_999 } }), 1024), false);
    assert.deepEqual(withMaxTokens(body({ thinking: { type: 'adaptive' } }), 500).thinking, { type: 'adaptive' });
    assert.deepEqual(withMaxTokens(body({ thinking: { type: 'disabled' } }), 500).thinking, { type: 'disabled' });
  });
});
