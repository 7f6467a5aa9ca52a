// Gemini usageMetadata → billable token counts and the OpenAI usage object.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readGeminiUsage } from '../../../src/providers/gemini/usage.js';

void describe('readGeminiUsage', () => {
  test('counts thoughts as output on top of candidates, and as reasoning', () => {
    const usage = readGeminiUsage({ promptTokenCount: 9, candidatesTokenCount: 29, thoughtsTokenCount: 256, totalTokenCount: 294 });
    assert.deepEqual(usage, {
      tokens: { input: 9, cachedInput: 0, output: 285, reasoning: 256 },
      openai: {
        prompt_tokens: 9,
        completion_tokens: 285,
        total_tokens: 294,
        prompt_tokens_details: { cached_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 256 },
      },
    });
  });

  test('counts tool-use prompt tokens as input and reports cached content (already inside the prompt count)', () => {
    const usage = readGeminiUsage({ promptTokenCount: 1000, toolUsePromptTokenCount: 200, cachedContentTokenCount: 800, candidatesTokenCount: 50 });
    assert.deepEqual(usage?.tokens, { input: 1200, cachedInput: 800, output: 50, reasoning: 0 });
    assert.deepEqual(usage?.openai.prompt_tokens_details, { cached_tokens: 800 });
    assert.equal(usage?.openai.total_tokens, 1250);
  });

  test('reads omitted counts beside a prompt count as 0 (Gemini leaves zeros out)', () => {
    assert.deepEqual(readGeminiUsage({ promptTokenCount: 8, totalTokenCount: 8 })?.tokens, { input: 8, cachedInput: 0, output: 0, reasoning: 0 });
  });

  test('is null without counts: missing, only trafficType, or nonsense values', () => {
    assert.equal(readGeminiUsage(undefined), null);
    assert.equal(readGeminiUsage({ trafficType: 'ON_DEMAND' }), null);
    assert.equal(readGeminiUsage({ promptTokenCount: -1, candidatesTokenCount: 3 }), null);
    assert.equal(readGeminiUsage({ promptTokenCount: '9' }), null);
  });
});
