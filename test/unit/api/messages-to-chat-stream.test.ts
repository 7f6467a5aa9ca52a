// A translated cell's stream (src/api/anthropic-messages/to-chat/stream.ts): chat chunks in, a Messages
// stream out — every frame with its event line, message_start first, blocks well nested with indexes from 0,
// tool calls whole, reasoning as marked thinking, one final cumulative message_delta with the cost, and
// message_stop. Recorded upstream streams are fed split at every byte boundary and must come out the same;
// the Anthropic SDK's own accumulator reads each result.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { thinkingMark } from '../../../src/api/anthropic-messages/thinking.js';
import { ChatMessagesStream, PING_AFTER_MS } from '../../../src/api/anthropic-messages/to-chat/stream.js';
import type { TokenUsage } from '../../../src/billing/pricing.js';
import { GatewayError } from '../../../src/errors.js';
import type { Charge } from '../../../src/pipeline/admission/reservation.js';
import { SseDecoder } from '../../../src/providers/framing/sse.js';
import { OpenAIChatStreamTranslator } from '../../../src/providers/openai/stream.js';
import { UpstreamFailureError } from '../../../src/providers/types.js';
import type { UsageRecord } from '../../../src/storage/types.js';
import { chatChunks, makeUsage, sseFromChunks, formatSseEvent, type ChunksSpec } from '../../support/mock-upstream.js';
import { testCompatibleProvider, testTarget } from '../../support/provider-fixture.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- events are arbitrary JSON
type Json = any;

const FIXTURES = new URL('../../fixtures/upstream/', import.meta.url);
const TARGET = testTarget({ provider: testCompatibleProvider(), upstreamModel: 'up', clientModel: 'gpt-claude' });
const INPUT_ESTIMATE = 321;

const open = (stops: readonly string[] = []) => new ChatMessagesStream(new OpenAIChatStreamTranslator(TARGET), 'gpt-claude', 'req_gw', INPUT_ESTIMATE, stops);
const charge = (tokens: TokenUsage, kind: 'exact' | 'estimate' = 'exact', cost = 1234): Charge => ({ settlement: { kind, tokens, status: 200 }, cost, record: {} as UsageRecord });

/** Feeds `bytes` through an SSE decoder (one read per piece, split at `splitAt`) into a fresh stream; the frames, and the stream. */
function feed(bytes: Buffer, splitAt: readonly number[] = [], stops: readonly string[] = []): { frames: string; stream: ChatMessagesStream } {
  const stream = open(stops);
  const decoder = new SseDecoder();
  let frames = '';
  let from = 0;
  for (const to of [...splitAt, bytes.length]) {
    for (const event of decoder.push(bytes.subarray(from, to))) frames += stream.push(event);
    from = to;
  }
  for (const event of decoder.end()) frames += stream.push(event);
  return { frames, stream };
}

/** The whole client stream: what push() gave, then final() with the exact usage the upstream reported. */
function whole(bytes: Buffer, splitAt: readonly number[] = [], stops: readonly string[] = []): string {
  const { frames, stream } = feed(bytes, splitAt, stops);
  const usage = stream.usage?.tokens ?? { input: 0, cachedInput: 0, output: 0, reasoning: 0 };
  return frames + stream.final(charge(usage));
}

const sse = (spec: ChunksSpec): Buffer => Buffer.from(sseFromChunks(chatChunks(spec)).sse.map(formatSseEvent).join(''));
/** JSON-lines chunks (the recorded *.chunks.txt) framed as an upstream sends them. */
const framedLines = (text: string): Buffer =>
  Buffer.from(
    text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => `data: ${line}\n\n`)
      .join('') + 'data: [DONE]\n\n',
  );

/** Parses the frames, checking each has one `event:` line naming its data's type and one `data:` line. */
function events(frames: string): Json[] {
  assert.ok(frames.endsWith('\n\n'));
  return frames
    .slice(0, -2)
    .split('\n\n')
    .map((frame) => {
      const lines = frame.split('\n');
      assert.equal(lines.length, 2, frame);
      assert.match(lines[0]!, /^event: /);
      const data = JSON.parse(lines[1]!.replace(/^data: /, '')) as Json;
      assert.equal(lines[0]!.slice(7), data.type, 'the event line names the data');
      return data;
    });
}

/** The order Anthropic's streams keep: message_start, well-nested blocks numbered from 0 (one open at a time), one message_delta, message_stop. */
function assertWellNested(list: Json[]): void {
  assert.equal(list[0].type, 'message_start');
  assert.equal(list.at(-1).type, 'message_stop');
  assert.equal(list.at(-2).type, 'message_delta');
  assert.equal(list.filter((e) => e.type === 'message_delta').length, 1);
  let open: number | undefined;
  let next = 0;
  for (const event of list.slice(1, -2)) {
    if (event.type === 'ping') continue;
    if (event.type === 'content_block_start') {
      assert.equal(open, undefined, 'one block open at a time');
      assert.equal(event.index, next++);
      open = event.index;
    } else if (event.type === 'content_block_delta') {
      assert.equal(event.index, open);
    } else {
      assert.equal(event.type, 'content_block_stop');
      assert.equal(event.index, open);
      open = undefined;
    }
  }
  assert.equal(open, undefined, 'every block closed');
}

/** What the Anthropic SDK's accumulator makes of the frames. */
async function sdkMessage(list: Json[]): Promise<Json> {
  const lines = list.map((event) => `${JSON.stringify(event)}\n`).join('');
  const readable = new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(lines));
      controller.close();
    },
  });
  return MessageStream.fromReadableStream(readable).finalMessage();
}

describe('ChatMessagesStream', () => {
  test('a text answer: message_start with the input estimate, a text block, the final usage with its cost, message_stop', async () => {
    const frames = whole(sse({ content: 'Hello there friend', usage: makeUsage(30, 5) }));
    const list = events(frames);
    assertWellNested(list);
    assert.deepEqual(list[0].message.usage, { input_tokens: INPUT_ESTIMATE, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 });
    assert.equal(list[0].message.model, 'gpt-claude');
    assert.match(list[0].message.id, /^msg_chatcmpl-mock/);
    assert.deepEqual(list.at(-2), {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { input_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 5, cost: 0.000001234 },
    });
    const message = await sdkMessage(list);
    assert.deepEqual(message.content, [{ type: 'text', text: 'Hello there friend' }]);
    assert.equal(message.usage.input_tokens, 30);
  });

  test("usage in Anthropic's convention: input_tokens without the cached tokens, which are cache_read_input_tokens", () => {
    const list = events(whole(sse({ content: 'Hi', usage: makeUsage(1000, 20, { cached: 600 }) })));
    assert.deepEqual(list.at(-2).usage, { input_tokens: 400, cache_creation_input_tokens: 0, cache_read_input_tokens: 600, output_tokens: 20, cost: 0.000001234 });
  });

  test('reasoning_content becomes a thinking block before the text, signed with the mark of its whole text', async () => {
    const list = events(whole(sse({ reasoningContent: 'Let me think about it.', content: 'Answer.' })));
    assertWellNested(list);
    const message = await sdkMessage(list);
    assert.deepEqual(message.content, [
      { type: 'thinking', thinking: 'Let me think about it.', signature: thinkingMark('Let me think about it.') },
      { type: 'text', text: 'Answer.' },
    ]);
  });

  test('tool calls: one tool_use block each, the arguments whole in one input_json_delta, stop_reason tool_use', async () => {
    const spec = { content: 'Reading.', toolCalls: [{ id: 'call_1', name: 'Read', arguments: { path: 'a.ts' } }, { id: 'functions.Grep:1', name: 'Grep', arguments: { pattern: 'x' } }] };
    const list = events(whole(sse(spec)));
    assertWellNested(list);
    const deltas = list.filter((e) => e.delta?.type === 'input_json_delta');
    assert.deepEqual(deltas.map((e) => e.delta.partial_json), ['{"path":"a.ts"}', '{"pattern":"x"}']);
    const message = await sdkMessage(list);
    assert.equal(message.stop_reason, 'tool_use');
    assert.deepEqual(
      message.content.map((b: Json) => [b.type, b.id, b.name, b.input ?? b.text]),
      [
        ['text', undefined, undefined, 'Reading.'],
        ['tool_use', 'call_1', 'Read', { path: 'a.ts' }],
        ['tool_use', message.content[2].id, 'Grep', { pattern: 'x' }],
      ],
    );
    assert.match(message.content[2].id, /^toolu_tg[A-Za-z0-9_-]{24}$/, 'an id Anthropic rejects is mapped');
  });

  test("a call's name commits the stream (message_start goes out) before its arguments are complete; they are metered as they come", () => {
    const stream = open();
    const [first, ...rest] = new SseDecoder().push(sse({ toolCalls: [{ id: 'call_1', name: 'Write', arguments: { path: 'a.ts', content: 'word '.repeat(100) } }] }));
    const frames = stream.push(first!);
    assert.equal(stream.sawOutput, true);
    assert.deepEqual(
      events(frames).map((e) => e.type),
      ['message_start'],
    );
    const named = stream.delivered();
    let more = '';
    for (const event of rest.slice(0, -3)) more += stream.push(event);
    assert.equal(more, '', 'the arguments wait for the call to end...');
    assert.ok(stream.delivered() > named + 50, '...but count as output as they arrive');
  });

  test('arguments that are not a JSON object become {}; a call with none too', async () => {
    const list = events(whole(sse({ toolCalls: [{ id: 'call_1', name: 'Read', arguments: '{"path": "a' }, { id: 'call_2', name: 'List', arguments: '' }] })));
    const message = await sdkMessage(list);
    assert.deepEqual(
      message.content.map((b: Json) => b.input),
      [{}, {}],
    );
  });

  test('fragments a server interleaves (parallel calls) are put together; each call is one block', () => {
    const chunk = (delta: Json, finish: string | null = null) => JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'up', choices: [{ index: 0, delta, finish_reason: finish }] });
    const lines = [
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'A', arguments: '{"x":' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'B', arguments: '{"y":2}' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
      chunk({}, 'tool_calls'),
    ];
    const list = events(whole(Buffer.from(lines.map((l) => `data: ${l}\n\n`).join('') + 'data: [DONE]\n\n')));
    assertWellNested(list);
    assert.deepEqual(
      list.filter((e) => e.delta?.type === 'input_json_delta').map((e) => e.delta.partial_json),
      ['{"x":1}', '{"y":2}'],
    );
  });

  test('finish reasons: length → max_tokens, content_filter → refusal, a stop the upstream names (vLLM) → stop_sequence', () => {
    const stop = (spec: ChunksSpec, stops: string[] = []) => events(whole(sse(spec), [], stops)).at(-2).delta;
    assert.deepEqual(stop({ content: 'cut', finishReason: 'length' }), { stop_reason: 'max_tokens', stop_sequence: null });
    assert.deepEqual(stop({ content: 'no', finishReason: 'content_filter' }), { stop_reason: 'refusal', stop_sequence: null });
    const vllm = chatChunks({ content: 'up to' }).map((c: Json) => (c.choices[0]?.finish_reason ? { ...c, choices: [{ ...c.choices[0], stop_reason: 'END' }] } : c));
    const bytes = Buffer.from(sseFromChunks(vllm).sse.map(formatSseEvent).join(''));
    assert.deepEqual(events(whole(bytes, [], ['END'])).at(-2).delta, { stop_reason: 'stop_sequence', stop_sequence: 'END' });
    assert.deepEqual(events(whole(bytes, [], ['OTHER'])).at(-2).delta, { stop_reason: 'end_turn', stop_sequence: null });
  });

  test('an error chunk is the upstream failure; the error frame is the Messages envelope', () => {
    const stream = open();
    const bad = { event: undefined, data: JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } }) };
    assert.throws(() => stream.push(bad), UpstreamFailureError);
    const [error] = events(stream.error(new GatewayError('upstream_error', { message: 'The upstream failed.' })));
    assert.deepEqual(error, { type: 'error', error: { type: 'api_error', message: 'The upstream failed.' }, request_id: 'req_gw' });
  });

  test('a growing hold cut: the block the client saw open closes, and the message ends as max_tokens with the estimate', () => {
    const stream = open();
    let frames = '';
    for (const event of new SseDecoder().push(sse({ content: 'one two three four' }))) {
      frames += stream.push(event);
      if (frames.includes('text_delta')) break;
    }
    stream.markDelivered();
    const cut = events(frames + stream.cut(charge({ input: 100, cachedInput: 0, output: 3, reasoning: 0 }, 'estimate', 500)));
    assertWellNested(cut);
    assert.deepEqual(cut.at(-2).delta, { stop_reason: 'max_tokens', stop_sequence: null });
    assert.equal(cut.at(-2).usage.output_tokens, 3);
    assert.ok(stream.delivered() > 0);
  });

  test('an upstream that says nothing but [DONE] still ends as a Messages stream; the keep-alive is a ping after 15 s', () => {
    const list = events(whole(Buffer.from('data: [DONE]\n\n')));
    assert.deepEqual(
      list.map((e) => e.type),
      ['message_start', 'message_delta', 'message_stop'],
    );
    assert.deepEqual(open().keepAlive, { afterMs: PING_AFTER_MS, frame: 'event: ping\ndata: {"type":"ping"}\n\n' });
    assert.equal(PING_AFTER_MS, 15_000);
  });
});

describe('ChatMessagesStream on recorded upstream streams', () => {
  test('OpenAI parallel tool calls, split at every byte boundary, give the same events', async () => {
    const bytes = readFileSync(new URL('openai-raw/parallel-tool-calls-stream-include-usage.sse', FIXTURES));
    const expected = whole(bytes);
    for (let at = 1; at < bytes.length; at++) assert.equal(whole(bytes, [at]), expected, `split at ${at}`);
    assert.equal(
      whole(
        bytes,
        Array.from({ length: bytes.length - 1 }, (_, i) => i + 1),
      ),
      expected,
      'one byte per read',
    );
    const list = events(expected);
    assertWellNested(list);
    const message = await sdkMessage(list);
    assert.deepEqual(
      message.content.map((b: Json) => [b.type, b.id, b.name, b.input]),
      [
        ['tool_use', 'call_lQnnsesjFMWMQ5IeWPHzR4th', 'GetWeatherArgs', { city: 'Edinburgh', country: 'UK', units: 'c' }],
        ['tool_use', 'call_2xjOUgaCdiwAcl9ZBL9LyMUU', 'get_stock_price', { ticker: 'AAPL', exchange: 'NASDAQ' }],
      ],
    );
    assert.equal(message.stop_reason, 'tool_use');
    assert.deepEqual([message.usage.input_tokens, message.usage.output_tokens], [149, 60]);
  });

  test('DeepSeek reasoning, one byte per read and split at every 64th byte, give the same thinking and text', async () => {
    const bytes = framedLines(readFileSync(new URL('openai-compatible/deepseek-reasoning.chunks.txt', FIXTURES), 'utf8'));
    const expected = whole(bytes);
    assert.equal(
      whole(
        bytes,
        Array.from({ length: bytes.length - 1 }, (_, i) => i + 1),
      ),
      expected,
    );
    for (let at = 64; at < bytes.length; at += 64) assert.equal(whole(bytes, [at]), expected, `split at ${at}`);
    const list = events(expected);
    assertWellNested(list);
    const message = await sdkMessage(list);
    assert.deepEqual(
      message.content.map((b: Json) => b.type),
      ['thinking', 'text'],
    );
    assert.equal(message.content[0].signature, thinkingMark(message.content[0].thinking));
    assert.ok(message.content[1].text.length > 0);
  });

  test('every recorded OpenAI-style stream comes out well nested and accumulates in the SDK', async () => {
    const recorded = [
      ['openai-raw/structured-output-stream-include-usage.sse', false],
      ['openai/openai-text.chunks.txt', true],
      ['openai/azure-model-router.1.chunks.txt', true],
      ['openai-compatible/deepseek-tool-call.chunks.txt', true],
      ['openai-compatible/groq-tool-call.chunks.txt', true],
      ['openai-compatible/mistral-tool-call.chunks.txt', true],
      ['openai-compatible/xai-tool-call.chunks.txt', true],
    ] as const;
    for (const [file, lines] of recorded) {
      const text = readFileSync(new URL(file, FIXTURES), 'utf8');
      const list = events(whole(lines ? framedLines(text) : Buffer.from(text)));
      assertWellNested(list);
      const message = await sdkMessage(list);
      assert.ok(message.content.length > 0, file);
      for (const block of message.content) if (block.type === 'tool_use') assert.match(block.id, /^[A-Za-z0-9_-]+$/, file);
    }
  });
});
