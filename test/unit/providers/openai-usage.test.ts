// OpenAI-style `usage` objects from every OpenAI-compatible dialect → billable counts.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readOpenAIUsage } from '../../../src/providers/openai/usage.js';

const FIXTURES = new URL('../../fixtures/upstream/', import.meta.url);

function lastChunkUsage(file: string): unknown {
  const lines = readFileSync(new URL(file, FIXTURES), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
  return (JSON.parse(lines.at(-1)!) as { usage: unknown }).usage;
}

describe('readOpenAIUsage', () => {
  test('reads the OpenAI shape', () => {
    const raw = { prompt_tokens: 15, completion_tokens: 78, total_tokens: 93 };
    const usage = readOpenAIUsage(raw)!;
    assert.deepEqual(usage.tokens, { input: 15, cachedInput: 0, output: 78, reasoning: 0 });
    assert.deepEqual(usage.openai, raw);
  });

  test('keeps reasoning tokens inside completion tokens (OpenAI convention)', () => {
    // A recorded Azure/OpenAI final chunk: 78 completion tokens of which 64 are reasoning.
    const usage = readOpenAIUsage(lastChunkUsage('openai/azure-model-router.1.chunks.txt'))!;
    assert.deepEqual(usage.tokens, { input: 15, cachedInput: 0, output: 78, reasoning: 64 });
    assert.equal(usage.openai.completion_tokens, 78);
    assert.equal(usage.openai.total_tokens, 93);
  });

  test('reads cached tokens from prompt_tokens_details.cached_tokens', () => {
    const usage = readOpenAIUsage({
      prompt_tokens: 2006,
      completion_tokens: 300,
      total_tokens: 2306,
      prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    })!;
    assert.deepEqual(usage.tokens, { input: 2006, cachedInput: 1920, output: 300, reasoning: 0 });
  });

  test("reads DeepSeek's prompt_cache_hit_tokens when there are no prompt_tokens_details", () => {
    const usage = readOpenAIUsage({
      prompt_tokens: 100,
      completion_tokens: 20,
      total_tokens: 120,
      prompt_cache_hit_tokens: 64,
      prompt_cache_miss_tokens: 36,
    })!;
    assert.deepEqual(usage.tokens, { input: 100, cachedInput: 64, output: 20, reasoning: 0 });
  });

  test('reads a recorded DeepSeek reasoner usage', () => {
    const usage = readOpenAIUsage(lastChunkUsage('openai-compatible/deepseek-reasoning.chunks.txt'))!;
    assert.deepEqual(usage.tokens, { input: 18, cachedInput: 0, output: 219, reasoning: 205 });
  });

  test('takes output = total − prompt when total exceeds prompt + completion (xAI), and normalises the client copy', () => {
    // Recorded xAI: completion 26 excludes 227 reasoning tokens; total 560 = 307 + 26 + 227.
    const raw = lastChunkUsage('openai-compatible/xai-tool-call.chunks.txt') as Record<string, unknown>;
    const usage = readOpenAIUsage(raw)!;
    assert.deepEqual(usage.tokens, { input: 307, cachedInput: 306, output: 253, reasoning: 227 });
    assert.equal(usage.openai.prompt_tokens, 307);
    assert.equal(usage.openai.completion_tokens, 253);
    assert.equal(usage.openai.total_tokens, 560);
    assert.deepEqual(usage.openai.completion_tokens_details, raw.completion_tokens_details);
    assert.equal(raw.completion_tokens, 26, 'the upstream object itself is not modified');
  });

  test('ignores a total_tokens below prompt + completion', () => {
    const usage = readOpenAIUsage({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 3 })!;
    assert.equal(usage.tokens.output, 5);
    assert.equal(usage.openai.total_tokens, 15);
  });

  test('clamps cached tokens to the prompt tokens', () => {
    const usage = readOpenAIUsage({ prompt_tokens: 10, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 50 } })!;
    assert.equal(usage.tokens.cachedInput, 10);
  });

  test('reads embedding usage (no completion_tokens) as zero output', () => {
    const usage = readOpenAIUsage({ prompt_tokens: 8, total_tokens: 8 })!;
    assert.deepEqual(usage.tokens, { input: 8, cachedInput: 0, output: 0, reasoning: 0 });
  });

  test('keeps the upstream extra fields in the client copy', () => {
    const usage = readOpenAIUsage({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3, queue_time: 0.04 })!;
    assert.equal(usage.openai.queue_time, 0.04);
  });

  test('returns null for garbage', () => {
    for (const raw of [
      null,
      undefined,
      'usage',
      42,
      [],
      {},
      { completion_tokens: 5 },
      { prompt_tokens: -1, completion_tokens: 5 },
      { prompt_tokens: 1.5, completion_tokens: 5 },
      { prompt_tokens: '10', completion_tokens: 5 },
      { prompt_tokens: 10, completion_tokens: 'five' },
      { prompt_tokens: 10, completion_tokens: null },
    ]) {
      assert.equal(readOpenAIUsage(raw), null, JSON.stringify(raw));
    }
  });
});
