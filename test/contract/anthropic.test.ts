// Contract tests for the `anthropic` adapter: every recorded Anthropic stream in
// test/fixtures/upstream/anthropic-raw (see SOURCES.txt there) is replayed through the path the gateway
// runs (bytes → SseDecoder.push per read → AnthropicChatStreamTranslator.onEvent → client chunks, as in
// src/pipeline/chat-stream.ts), whole, one byte per push and split in two at every byte; and the recorded
// non-stream Messages go through parseChatResponse. Expected numbers are read off the recordings by hand.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import type { TokenUsage } from '../../src/billing/pricing.js';
import { parseAnthropicChatResponse } from '../../src/providers/anthropic/response.js';
import { AnthropicChatStreamTranslator } from '../../src/providers/anthropic/stream.js';
import type { JsonObject, UpstreamTarget } from '../../src/providers/types.js';
import { assertMatchesSchema } from '../support/openapi.js';
import { testAnthropicProvider, testTarget } from '../support/provider-fixture.js';
import { everyOffset, replayDigest, replayStream, type Replay, type TranslatorFactory } from './replay.js';
import { countsOf } from '../support/token-counts.js';

const UPSTREAM = new URL('../fixtures/upstream/', import.meta.url);

const TARGET: UpstreamTarget = testTarget({
  provider: testAnthropicProvider(),
  upstreamModel: 'claude-x',
  clientModel: 'claude-client',
  maxOutputTokens: 64_000,
});

const anthropicTranslator: TranslatorFactory = (target) => new AnthropicChatStreamTranslator(target);

/** Feeds `bytes` in pieces ending at `splitAt`, exactly as relay()/forward() in chat-stream.ts do. */
const replay = (bytes: Buffer, splitAt: readonly number[] = []): Replay => replayStream(bytes, splitAt, TARGET, anthropicTranslator);

/** `created` is the clock at translator creation, not stream data, so it is zeroed. */
const digest = (bytes: Buffer, splitAt: readonly number[] = []): string => replayDigest(bytes, splitAt, TARGET, anthropicTranslator, { madeUp: true });

interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** What an OpenAI client assembles from the deltas. */
function assemble(chunks: JsonObject[]): { content: string; reasoning: string; thinkingBlocks: JsonObject[]; toolCalls: ToolCall[]; finish: string[] } {
  const out = { content: '', reasoning: '', thinkingBlocks: [] as JsonObject[], toolCalls: [] as ToolCall[], finish: [] as string[] };
  for (const chunk of chunks) {
    const choice = (chunk.choices as JsonObject[])[0]!;
    const delta = choice.delta as JsonObject;
    if (typeof delta.content === 'string') out.content += delta.content;
    if (typeof delta.reasoning_content === 'string') out.reasoning += delta.reasoning_content;
    if (Array.isArray(delta.thinking_blocks)) out.thinkingBlocks.push(...(delta.thinking_blocks as JsonObject[]));
    for (const call of (delta.tool_calls ?? []) as JsonObject[]) {
      const index = call.index as number;
      const fn = call.function as JsonObject;
      out.toolCalls[index] ??= { id: '', name: '', arguments: '' };
      const slot = out.toolCalls[index];
      if (typeof call.id === 'string') slot.id = call.id;
      if (typeof fn.name === 'string') slot.name = fn.name;
      if (typeof fn.arguments === 'string') slot.arguments += fn.arguments;
    }
    if (typeof choice.finish_reason === 'string') out.finish.push(choice.finish_reason);
  }
  return out;
}

interface StreamCase {
  readonly file: string;
  readonly events: number;
  readonly chunks: number;
  readonly id: string;
  readonly usage: TokenUsage;
  readonly content: string;
  readonly reasoning: string;
  readonly signature?: string;
  readonly toolCalls: readonly ToolCall[];
  readonly finish: string;
}

const SIGNATURE =
  'EvQBCkYICxgCKkAxhD4NUKFzudtZ6NzbZdEiBACIScTzqjPViM596iWLZIk4EFKYYBj3B6Ptl3b0dcQv/VeJBNbejNWIWRBn+KPNEgz6HWtKx7p+QRgKsEoaDGjsiqfht7gTRFYHiyIwD1VSmNqHxv3wy8KEMP+LYb/TC4UH3H97tuoaADARFFcA0phdfxnzKQxFnc9lwY+dKlzUsaKSUAFeu1bDL5ikZJ1vL0Fkz6JjoFke0L/wOJRIUDUlDUOFJ1tZ3ea7g6LGE/5hwuvWgLwewdcm64d+43l7F57XrOmqNd6flI2K/oPr/4yzNgvi/EhT6Ca17BgB';

// `events` counts every SSE event (pings included); `chunks` = message_start + each non-empty delta +
// each completed thinking block + a '{}' for an argument-less tool + the message_delta finish chunk.
const STREAM_CASES: readonly StreamCase[] = [
  {
    file: 'anthropic-text.reframed.sse',
    events: 12,
    chunks: 8,
    id: 'msg_01QC4g3HwBThD4BaNtBckFDJ',
    usage: { input: 12, cachedInput: 0, output: 30, reasoning: 0 },
    content: "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?",
    reasoning: '',
    toolCalls: [],
    finish: 'stop',
  },
  {
    file: 'basic_response.sse', // verbatim: `{"type": "ping"}` with a space; message_delta has output_tokens only
    events: 9,
    chunks: 5,
    id: 'msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK',
    usage: { input: 11, cachedInput: 0, output: 6, reasoning: 0 },
    content: 'Hello there!',
    reasoning: '',
    toolCalls: [],
    finish: 'stop',
  },
  {
    file: 'tool_use_response.sse', // verbatim; the first input_json_delta is ""
    events: 15,
    chunks: 9,
    id: 'msg_019Q1hrJbZG26Fb9BQhrkHEr',
    usage: { input: 377, cachedInput: 0, output: 65, reasoning: 0 },
    content: "I'll check the current weather in Paris for you.",
    reasoning: '',
    toolCalls: [{ id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', name: 'get_weather', arguments: '{"location": "Paris"}' }],
    finish: 'tool_calls',
  },
  {
    file: 'anthropic-clear-thinking.1.reframed.sse', // 10 thinking deltas (one empty), a signature, 3 text deltas
    events: 22,
    chunks: 15,
    id: 'msg_01Y6V41gqPaKWEw7iPouH7iW',
    // reasoning: the o200k_base count of the thinking text (25), an estimate; Anthropic reports none.
    usage: { input: 69, cachedInput: 0, output: 53, reasoning: 25 },
    content: '925 ÷ 5 = 185',
    reasoning: 'The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185',
    signature: SIGNATURE,
    toolCalls: [],
    finish: 'stop',
  },
  {
    file: 'anthropic-json-tool.1.reframed.sse', // a tool named "json": an ordinary tool call (only json_response is reserved)
    events: 9,
    chunks: 5,
    id: 'msg_01K2JbSUMYhez5RHoK9ZCj9U',
    usage: { input: 849, cachedInput: 0, output: 47, reasoning: 0 },
    content: '',
    reasoning: '',
    toolCalls: [
      {
        id: 'toolu_01KFbKqPYSuAKujiL6mTfzYA',
        name: 'json',
        arguments: '{"elements": [{"location": "San Francisco", "temperature": 58, "condition": "sunny"}]}',
      },
    ],
    finish: 'tool_calls',
  },
  {
    file: 'anthropic-message-delta-input-tokens.reframed.sse', // message_start says input 43, message_delta 61
    events: 8,
    chunks: 4,
    id: 'msg_3196a1cc08de4d76b85b8f5777c0d42b',
    usage: { input: 61, cachedInput: 0, output: 2, reasoning: 0 },
    content: 'pong',
    reasoning: '',
    toolCalls: [],
    finish: 'stop',
  },
  {
    file: 'anthropic-refusal.reframed.sse', // no content block at all
    events: 4,
    chunks: 2,
    id: 'msg_01RefusalStreamAbcdefghijk',
    usage: { input: 18, cachedInput: 0, output: 5, reasoning: 0 },
    content: '',
    reasoning: '',
    toolCalls: [],
    finish: 'content_filter',
  },
  {
    file: 'anthropic-tool-no-args.reframed.sse', // the tool's only input_json_delta is ""
    events: 13,
    chunks: 6,
    id: 'msg_01GE2RKp1VYsPzdFs3sS9z5S',
    usage: { input: 565, cachedInput: 0, output: 48, reasoning: 0 },
    content: "I'll update the issue list for you.",
    reasoning: '',
    toolCalls: [{ id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', name: 'updateIssueList', arguments: '{}' }],
    finish: 'tool_calls',
  },
];

describe('Anthropic stream recordings', () => {
  test('every recording in anthropic-raw has a case', () => {
    const files = readdirSync(new URL('anthropic-raw/', UPSTREAM)).filter((f) => f.endsWith('.sse'));
    assert.deepEqual(STREAM_CASES.map((c) => c.file).sort(), files.sort());
  });

  for (const c of STREAM_CASES) {
    describe(c.file, () => {
      const bytes = readFileSync(new URL(`anthropic-raw/${c.file}`, UPSTREAM));

      test('relays schema-valid chunks with the recorded text, tool calls, usage and finish reason', () => {
        const run = replay(bytes);
        assert.equal(run.events, c.events);
        assert.equal(run.chunks.length, c.chunks);
        for (const chunk of run.chunks) {
          assertMatchesSchema('CreateChatCompletionStreamResponse', chunk);
          assert.equal(chunk.id, c.id);
          assert.equal(chunk.model, 'claude-client');
        }
        assert.equal(run.id, c.id);
        assert.equal(run.finished, true, 'message_stop ends the stream');
        assert.deepEqual(countsOf(run.usage?.tokens), c.usage);
        assert.deepEqual(run.usage?.openai, {
          prompt_tokens: c.usage.input,
          completion_tokens: c.usage.output,
          total_tokens: c.usage.input + c.usage.output,
          // Recordings that carry Anthropic's cache-write counter report it (cache_write_tokens), even 0.
          prompt_tokens_details: bytes.includes('cache_creation_input_tokens')
            ? { cached_tokens: c.usage.cachedInput, cache_write_tokens: c.usage.cacheWrite ?? 0 }
            : { cached_tokens: c.usage.cachedInput },
          completion_tokens_details: { reasoning_tokens: c.usage.reasoning },
        });
        const got = assemble(run.chunks);
        assert.equal(got.content, c.content);
        assert.equal(got.reasoning, c.reasoning);
        assert.deepEqual(got.toolCalls, c.toolCalls);
        for (const call of got.toolCalls) assert.equal(typeof JSON.parse(call.arguments), 'object');
        assert.deepEqual(got.finish, [c.finish], 'exactly one finish, on the last chunk');
        assert.equal((run.chunks.at(-1)!.choices as JsonObject[])[0]!.finish_reason, c.finish);
        assert.deepEqual((run.chunks[0]!.choices as JsonObject[])[0]!.delta, { role: 'assistant', content: '' });
        if (c.signature) {
          assert.deepEqual(got.thinkingBlocks, [{ type: 'thinking', thinking: c.reasoning, signature: c.signature }]);
        } else {
          assert.deepEqual(got.thinkingBlocks, []);
        }
        assert.equal(run.meter.sawFinish, true);
        assert.equal(run.meter.sawOutput, c.content !== '' || c.reasoning !== '' || c.toolCalls.length > 0);
      });

      test('gives the same output whole, one byte per push, and split in two at every byte', () => {
        const whole = digest(bytes);
        assert.equal(digest(bytes, everyOffset(bytes.length)), whole, 'one byte per push');
        for (let offset = 1; offset < bytes.length; offset++) {
          const split = digest(bytes, [offset]);
          if (split !== whole) assert.fail(`split at byte ${offset} of ${bytes.length} changed the output`);
        }
      });
    });
  }
});

describe('Anthropic non-stream recordings', () => {
  const read = (file: string): unknown => JSON.parse(readFileSync(new URL(`anthropic/${file}`, UPSTREAM), 'utf8'));

  test('anthropic-text.json: text becomes the message content', () => {
    const { body, usage } = parseAnthropicChatResponse(read('anthropic-text.json'), TARGET);
    assertMatchesSchema('CreateChatCompletionResponse', body);
    assert.equal(body.id, 'msg_01VdEjxAP5ahtHKrrRdNBteQ');
    assert.equal(body.model, 'claude-client');
    const choice = (body.choices as JsonObject[])[0]!;
    assert.deepEqual(choice.message, {
      role: 'assistant',
      content: "Hello! I'm doing well, thanks for asking. How are you doing today? Is there anything I can help you with?",
      refusal: null,
    });
    assert.equal(choice.finish_reason, 'stop');
    assert.deepEqual(countsOf(usage?.tokens), { input: 12, cachedInput: 0, output: 29, reasoning: 0 });
    assert.equal((body.usage as JsonObject).total_tokens, 41);
  });

  test('anthropic-json-tool.1.json: a tool named "json" is an ordinary tool call', () => {
    const { body, usage } = parseAnthropicChatResponse(read('anthropic-json-tool.1.json'), TARGET);
    assertMatchesSchema('CreateChatCompletionResponse', body);
    const choice = (body.choices as JsonObject[])[0]!;
    const message = choice.message as JsonObject;
    assert.equal(message.content, null);
    const calls = message.tool_calls as JsonObject[];
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.id, 'toolu_01Q9ExVZnzZj7E2QQYHYtNUa');
    assert.deepEqual(calls[0]!.function, {
      name: 'json',
      arguments: JSON.stringify({
        elements: [
          { location: 'San Francisco', temperature: -5, condition: 'snowy' },
          { location: 'London', temperature: 0, condition: 'snowy' },
          { location: 'Paris', temperature: 23, condition: 'cloudy' },
          { location: 'Berlin', temperature: -9, condition: 'snowy' },
        ],
      }),
    });
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.deepEqual(countsOf(usage?.tokens), { input: 1151, cachedInput: 0, output: 87, reasoning: 0 });
  });

  test('anthropic-tool-no-args.json: text and a tool call with arguments "{}"', () => {
    const { body, usage } = parseAnthropicChatResponse(read('anthropic-tool-no-args.json'), TARGET);
    assertMatchesSchema('CreateChatCompletionResponse', body);
    const choice = (body.choices as JsonObject[])[0]!;
    const message = choice.message as JsonObject;
    assert.match(message.content as string, /^<thinking>\nThe updateIssueList tool .* the current issue list:$/s);
    assert.deepEqual(message.tool_calls, [
      { id: 'toolu_01LRmxn9vGM1d2DZSDBowdZ1', type: 'function', function: { name: 'updateIssueList', arguments: '{}' } },
    ]);
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.deepEqual(countsOf(usage?.tokens), { input: 602, cachedInput: 0, output: 93, reasoning: 0 });
  });
});
