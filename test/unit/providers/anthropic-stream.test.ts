// The Anthropic stream translator on events the recordings do not cover: JSON mode, redacted thinking,
// error events, cache counters, usage before the end, unknown blocks. (Recordings: test/contract/anthropic.test.ts.)
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { AnthropicChatStreamTranslator } from '../../../src/providers/anthropic/stream.js';
import { UpstreamFailureError, type ChatRequestBody, type JsonObject, type UpstreamTarget } from '../../../src/providers/types.js';
import { assertMatchesSchema } from '../../support/openapi.js';
import { testAnthropicProvider, testTarget } from '../../support/provider-fixture.js';

const TARGET: UpstreamTarget = testTarget({
  provider: testAnthropicProvider(),
  upstreamModel: 'claude-sonnet-4-5',
  clientModel: 'claude-sonnet',
  maxOutputTokens: 64_000,
});

const START = { type: 'message_start', message: { id: 'msg_s', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 5, output_tokens: 1 } } };
const STOP = { type: 'message_stop' };

function delta(stopReason: string, usage: Record<string, number> = { output_tokens: 9 }): JsonObject {
  return { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage };
}

/** Runs payloads through a fresh translator; returns the translator and the deltas/finishes it emitted. */
function run(payloads: unknown[], body?: ChatRequestBody): { translator: AnthropicChatStreamTranslator; deltas: JsonObject[]; finishes: unknown[] } {
  const translator = new AnthropicChatStreamTranslator(TARGET, body);
  const deltas: JsonObject[] = [];
  const finishes: unknown[] = [];
  for (const payload of payloads) {
    const chunk = translator.onEvent({ event: (payload as JsonObject).type as string, data: JSON.stringify(payload) });
    if (!chunk) continue;
    assertMatchesSchema('CreateChatCompletionStreamResponse', chunk);
    const choice = (chunk.choices as JsonObject[])[0]!;
    deltas.push(choice.delta as JsonObject);
    if (choice.finish_reason !== null) finishes.push(choice.finish_reason);
  }
  return { translator, deltas, finishes };
}

describe('AnthropicChatStreamTranslator', () => {
  const JSON_MODE = { model: 'm', messages: [], response_format: { type: 'json_object' } } as unknown as ChatRequestBody;
  const textBlock = (index: number, text: string) => [
    { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index, delta: { type: 'text_delta', text } },
    { type: 'content_block_stop', index },
  ];

  test('in JSON mode, drops text written before the json_response call (thinking on: the tool is not forced)', () => {
    const { deltas, finishes } = run(
      [
        START,
        ...textBlock(0, "I'll call json_response."),
        { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 't', name: 'json_response', input: {} } },
        { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"answer":42}' } },
        { type: 'content_block_stop', index: 1 },
        delta('tool_use'),
        STOP,
      ],
      JSON_MODE,
    );
    assert.equal(deltas.map((d) => d.content ?? '').join(''), '{"answer":42}');
    assert.deepEqual(finishes, ['stop']);
  });

  test('in JSON mode, text is the reply after all when no json_response call comes', () => {
    const { deltas, finishes } = run([START, ...textBlock(0, '{"answer":42}'), delta('end_turn'), STOP], JSON_MODE);
    assert.equal(deltas.map((d) => d.content ?? '').join(''), '{"answer":42}');
    assert.deepEqual(finishes, ['stop']);
  });

  test('streams a json_response tool call as content and finishes with stop', () => {
    const { deltas, finishes } = run([
      START,
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_j', name: 'json_response', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"a":' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '1}' } },
      { type: 'content_block_stop', index: 0 },
      delta('tool_use'),
      STOP,
    ]);
    assert.deepEqual(deltas, [{ role: 'assistant', content: '' }, { content: '{"a":' }, { content: '1}' }, {}]);
    assert.deepEqual(finishes, ['stop']);
  });

  test('a json_response call without input streams "{}" as content', () => {
    const { deltas } = run([
      START,
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_j', name: 'json_response', input: {} } },
      { type: 'content_block_stop', index: 0 },
      delta('tool_use'),
    ]);
    assert.deepEqual(deltas.slice(1), [{ content: '{}' }, {}]);
  });

  test('numbers tool calls 0, 1, ... across content blocks and skips the json_response one', () => {
    const { deltas, finishes } = run([
      START,
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Calling.' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_a', name: 'a', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"x":1}' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_j', name: 'json_response', input: {} } },
      { type: 'content_block_stop', index: 2 },
      { type: 'content_block_start', index: 3, content_block: { type: 'tool_use', id: 'toolu_b', name: 'b', input: {} } },
      { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{"y":2}' } },
      { type: 'content_block_stop', index: 3 },
      delta('tool_use'),
    ]);
    const calls = deltas.flatMap((d) => (d.tool_calls ?? []) as JsonObject[]);
    assert.deepEqual(calls, [
      { index: 0, id: 'toolu_a', type: 'function', function: { name: 'a', arguments: '' } },
      { index: 0, function: { arguments: '{"x":1}' } },
      { index: 1, id: 'toolu_b', type: 'function', function: { name: 'b', arguments: '' } },
      { index: 1, function: { arguments: '{"y":2}' } },
    ]);
    assert.deepEqual(finishes, ['tool_calls']);
  });

  test('a redacted thinking block reaches the client as a thinking_blocks entry with its data', () => {
    const { deltas } = run([
      START,
      { type: 'content_block_start', index: 0, content_block: { type: 'redacted_thinking', data: 'EmwKAhgBEgy' } },
      { type: 'content_block_stop', index: 0 },
      delta('end_turn'),
    ]);
    assert.deepEqual(deltas[1], { thinking_blocks: [{ type: 'redacted_thinking', data: 'EmwKAhgBEgy' }] });
  });

  test('an error event throws UpstreamFailureError with the status of its type', () => {
    const translator = new AnthropicChatStreamTranslator(TARGET);
    translator.onEvent({ event: 'message_start', data: JSON.stringify(START) });
    const error = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
    assert.throws(
      () => translator.onEvent({ event: 'error', data: JSON.stringify(error) }),
      (e: unknown) =>
        e instanceof UpstreamFailureError &&
        e.failure.status === 529 &&
        e.failure.message === 'Overloaded' &&
        e.failure.type === 'overloaded_error' &&
        e.failure.code === 'overloaded_error',
    );
  });

  test('an event that is not JSON is a malformed stream (502)', () => {
    const translator = new AnthropicChatStreamTranslator(TARGET);
    assert.throws(
      () => translator.onEvent({ event: 'content_block_delta', data: '{"type":' }),
      (e: unknown) => e instanceof UpstreamFailureError && e.failure.status === 502,
    );
  });

  test('reports no usage until message_delta, so a cut stream is settled on what was delivered', () => {
    const { translator } = run([START, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }]);
    assert.equal(translator.usage, null);
    assert.equal(translator.finished, false);
    assert.equal(translator.id, 'msg_s');
  });

  test('the last reported counters win, including cache counters restated by message_delta', () => {
    const start = { ...START, message: { ...START.message, usage: { input_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 7, output_tokens: 1 } } };
    const { translator } = run([start, delta('end_turn', { output_tokens: 3, cache_read_input_tokens: 120 }), delta('end_turn', { output_tokens: 4 }), STOP]);
    assert.deepEqual(translator.usage?.tokens, { input: 5 + 120 + 7, cachedInput: 120, output: 4, reasoning: 0, cacheWrite: 7, cacheWrite1h: 0 });
    assert.equal(translator.finished, true);
  });

  test('ignores ping, unknown events and server-tool blocks', () => {
    const { deltas } = run([
      START,
      { type: 'ping' },
      { type: 'content_block_start', index: 0, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"query":"x"}' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'brand_new_event' },
      delta('end_turn'),
    ]);
    assert.deepEqual(deltas, [{ role: 'assistant', content: '' }, {}]);
  });

  test('max_tokens finishes with length', () => {
    assert.deepEqual(run([START, delta('max_tokens')]).finishes, ['length']);
  });
});
