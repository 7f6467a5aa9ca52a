// Anthropic Messages → chat.completion bodies and usage.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { countText } from '../../../src/tokens/count-text.js';
import { mapStopReason, parseAnthropicChatResponse } from '../../../src/providers/anthropic/response.js';
import { UpstreamFailureError, type JsonObject, type UpstreamTarget } from '../../../src/providers/types.js';
import { assertMatchesSchema } from '../../support/openapi.js';
import { testAnthropicProvider, testTarget } from '../../support/provider-fixture.js';
import { countsOf } from '../../support/token-counts.js';

const TARGET: UpstreamTarget = testTarget({
  provider: testAnthropicProvider(),
  upstreamModel: 'claude-sonnet-4-5',
  clientModel: 'claude-sonnet',
  maxOutputTokens: 64_000,
});

function message(content: unknown[], extra: Record<string, unknown> = {}): JsonObject {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5-20250929',
    content,
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 20 },
    ...extra,
  };
}

function parse(json: unknown): { body: JsonObject; message: JsonObject; choice: JsonObject } {
  const { body } = parseAnthropicChatResponse(json, TARGET);
  assertMatchesSchema('CreateChatCompletionResponse', body);
  const choice = (body.choices as JsonObject[])[0]!;
  return { body, message: choice.message as JsonObject, choice };
}

describe('parseAnthropicChatResponse', () => {
  test('builds a chat.completion with the message id, the client model and joined text', () => {
    const before = Math.floor(Date.now() / 1000);
    const { body, message: m, choice } = parse(message([{ type: 'text', text: 'Hello' }, { type: 'text', text: ' world' }]));
    assert.equal(body.id, 'msg_1');
    assert.equal(body.object, 'chat.completion');
    assert.equal(body.model, 'claude-sonnet');
    assert.ok((body.created as number) >= before);
    assert.deepEqual(m, { role: 'assistant', content: 'Hello world', refusal: null });
    assert.equal(choice.index, 0);
    assert.equal(choice.logprobs, null);
    assert.equal(choice.finish_reason, 'stop');
  });

  test('thinking becomes reasoning_content and thinking_blocks with signatures and redacted data', () => {
    const { message: m } = parse(
      message([
        { type: 'thinking', thinking: 'First, ', signature: 'sig-a' },
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'thinking', thinking: 'then.', signature: 'sig-b' },
        { type: 'text', text: 'Answer' },
      ]),
    );
    assert.equal(m.content, 'Answer');
    assert.equal(m.reasoning_content, 'First, then.');
    assert.deepEqual(m.thinking_blocks, [
      { type: 'thinking', thinking: 'First, ', signature: 'sig-a' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'thinking', thinking: 'then.', signature: 'sig-b' },
    ]);
  });

  test('tool_use blocks become tool_calls with stringified input; content is null without text', () => {
    const { message: m, choice } = parse(
      message(
        [
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_2', name: 'noop', input: {} },
        ],
        { stop_reason: 'tool_use' },
      ),
    );
    assert.equal(m.content, null);
    assert.deepEqual(m.tool_calls, [
      { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { id: 'toolu_2', type: 'function', function: { name: 'noop', arguments: '{}' } },
    ]);
    assert.equal(choice.finish_reason, 'tool_calls');
  });

  test('a json_response tool call is the content, not a tool call, and finishes with stop', () => {
    const { message: m, choice } = parse(
      message(
        [
          { type: 'text', text: 'Here it is:' },
          { type: 'tool_use', id: 'toolu_j', name: 'json_response', input: { answer: 'yes', n: 2 } },
        ],
        { stop_reason: 'tool_use' },
      ),
    );
    assert.equal(m.content, '{"answer":"yes","n":2}');
    assert.equal(m.tool_calls, undefined);
    assert.equal(choice.finish_reason, 'stop');
  });

  test('json_response beside a real tool call: content is the JSON, the real call stays, finish is tool_calls', () => {
    const { message: m, choice } = parse(
      message(
        [
          { type: 'tool_use', id: 'toolu_a', name: 'lookup', input: { q: 1 } },
          { type: 'tool_use', id: 'toolu_j', name: 'json_response', input: {} },
        ],
        { stop_reason: 'tool_use' },
      ),
    );
    assert.equal(m.content, '{}');
    assert.equal((m.tool_calls as JsonObject[]).length, 1);
    assert.equal(choice.finish_reason, 'tool_calls');
  });

  test('an empty reply has content "" (a refusal finishes with content_filter)', () => {
    const { message: m, choice } = parse(message([], { stop_reason: 'refusal' }));
    assert.equal(m.content, '');
    assert.equal(choice.finish_reason, 'content_filter');
  });

  test('usage: input includes cache reads and writes, cached is the reads, total is input + output', () => {
    const { body, usage } = parseAnthropicChatResponse(
      message([{ type: 'text', text: 'x' }], {
        usage: { input_tokens: 100, cache_read_input_tokens: 1000, cache_creation_input_tokens: 50, output_tokens: 7 },
      }),
      TARGET,
    );
    // Without the breakdown by lifetime, every write is a 5-minute one.
    assert.deepEqual(countsOf(usage?.tokens), { input: 1150, cachedInput: 1000, output: 7, reasoning: 0, cacheWrite: 50, cacheWrite1h: 0 });
    assert.deepEqual(body.usage, {
      prompt_tokens: 1150,
      completion_tokens: 7,
      total_tokens: 1157,
      prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 50 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  test('reasoning tokens are a tokenizer estimate of the thinking text, capped at the output count', () => {
    const thinking = 'Let me think about this step by step, carefully and at some length.';
    const estimate = countText(thinking);
    const roomy = parseAnthropicChatResponse(message([{ type: 'thinking', thinking, signature: 's' }], { usage: { input_tokens: 1, output_tokens: 500 } }), TARGET);
    assert.equal(roomy.usage?.tokens.reasoning, estimate);
    const tight = parseAnthropicChatResponse(message([{ type: 'thinking', thinking, signature: 's' }], { usage: { input_tokens: 1, output_tokens: 3 } }), TARGET);
    assert.equal(tight.usage?.tokens.reasoning, 3);
  });

  test('usage is null when the message carries no counts', () => {
    const { body, usage } = parseAnthropicChatResponse(message([{ type: 'text', text: 'x' }], { usage: undefined }), TARGET);
    assert.equal(usage, null);
    assert.equal(body.usage, undefined);
  });

  test('an error body in a 200 throws UpstreamFailureError with the status of its type', () => {
    assert.throws(
      () => parseAnthropicChatResponse({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, TARGET),
      (error: unknown) => error instanceof UpstreamFailureError && error.failure.status === 529 && error.failure.message === 'Overloaded',
    );
  });

  test('a body that is not a Message is a 502 malformed reply', () => {
    for (const json of [null, 'text', [], { type: 'message' }]) {
      assert.throws(
        () => parseAnthropicChatResponse(json, TARGET),
        (error: unknown) => error instanceof UpstreamFailureError && error.failure.status === 502,
      );
    }
  });
});

describe('mapStopReason', () => {
  test('maps every Anthropic stop_reason to the convention', () => {
    assert.equal(mapStopReason('end_turn', false), 'stop');
    assert.equal(mapStopReason('stop_sequence', false), 'stop');
    assert.equal(mapStopReason('pause_turn', false), 'stop');
    assert.equal(mapStopReason('max_tokens', false), 'length');
    assert.equal(mapStopReason('model_context_window_exceeded', false), 'length');
    assert.equal(mapStopReason('tool_use', true), 'tool_calls');
    assert.equal(mapStopReason('tool_use', false), 'stop', 'only the JSON-mode tool was called');
    assert.equal(mapStopReason('refusal', false), 'content_filter');
    assert.equal(mapStopReason('something_new', false), 'stop');
  });
});
