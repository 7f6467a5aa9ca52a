// Reading a Claude model id's family and version (which models take adaptive thinking, ADR 0046).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { claudeVersion, takesAdaptiveThinking } from '../../../src/providers/anthropic/adaptive-thinking.js';

test('claudeVersion reads family, major and minor; a date is not a minor', () => {
  assert.deepEqual(claudeVersion('claude-opus-4-7'), { family: 'opus', major: 4, minor: 7 });
  assert.deepEqual(claudeVersion('claude-sonnet-4-6-20260101'), { family: 'sonnet', major: 4, minor: 6 });
  assert.deepEqual(claudeVersion('claude-opus-4-20250514'), { family: 'opus', major: 4, minor: 0 });
  assert.deepEqual(claudeVersion('claude-haiku-5'), { family: 'haiku', major: 5, minor: 0 });
  assert.deepEqual(claudeVersion('anthropic.claude-opus-4-6-v1'), { family: 'opus', major: 4, minor: 6 });
  assert.deepEqual(claudeVersion('claude-sonnet-4-6@20260101'), { family: 'sonnet', major: 4, minor: 6 });
  assert.deepEqual(claudeVersion('Claude-Opus-4.7'), { family: 'opus', major: 4, minor: 7 });
  assert.equal(claudeVersion('claude-3-7-sonnet-20250219'), undefined);
  assert.equal(claudeVersion('claude-latest'), undefined);
  assert.equal(claudeVersion('gpt-4.1'), undefined);
  assert.equal(claudeVersion('myclaude-opus-4-7'), undefined);
});

test('takesAdaptiveThinking: Claude 4.6 and later only', () => {
  for (const id of ['claude-opus-4-6', 'claude-sonnet-4-6', 'claude-opus-4-7', 'claude-haiku-4-7-20260301', 'claude-opus-5', 'claude-opus-4-10']) assert.equal(takesAdaptiveThinking(id), true, id);
  for (const id of ['claude-opus-4-5', 'claude-sonnet-4-5-20250929', 'claude-opus-4-1', 'claude-opus-4-20250514', 'claude-3-7-sonnet-20250219', 'claude-latest', 'gpt-5']) assert.equal(takesAdaptiveThinking(id), false, id);
});
