// The Responses stream a translated cell writes from chat chunks (src/api/openai-responses/to-chat/stream.ts),
// fed recorded upstream streams (test/fixtures/upstream/) through the kind's decoder and chat translator as
// the relay does: events named and numbered from 0, each item's complete output_item.done, exactly one
// terminal event (after the settlement) with the usage in the Responses convention and its cost; the same
// bytes split at every offset give the same events; a cut and a failure end as Responses events; and a
// whole chat completion becomes the same Response.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { responseOfCompletion } from '../../../../src/api/openai-responses/to-chat/answer.js';
import { ChatResponsesStream } from '../../../../src/api/openai-responses/to-chat/stream.js';
import { asResponsesUsage } from '../../../../src/api/openai-responses/to-chat/usage.js';
import type { ResponsesBody } from '../../../../src/api/openai-responses/validate.js';
import type { TokenUsage } from '../../../../src/billing/pricing.js';
import { GatewayError } from '../../../../src/errors.js';
import type { Charge } from '../../../../src/pipeline/admission/reservation.js';
import { frameDecoder } from '../../../../src/providers/framing/index.js';
import { OpenAIChatStreamTranslator } from '../../../../src/providers/openai/stream.js';
import { readOpenAIUsage } from '../../../../src/providers/openai/usage.js';
import type { UsageRecord } from '../../../../src/storage/types.js';
import { everyOffset, frameEnds, framesFromChunksFile } from '../../../contract/replay.js';
import { testCompatibleProvider, testTarget } from '../../../support/provider-fixture.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- events are arbitrary JSON
type Json = any;

const TARGET = testTarget({ provider: testCompatibleProvider(), upstreamModel: 'up', clientModel: 'local-coder' });
const BODY = { model: 'local-coder', input: 'Hi', stream: true } as ResponsesBody;
const fixture = (path: string) => new URL(`../../../fixtures/upstream/${path}`, import.meta.url);
const PARALLEL = readFileSync(fixture('openai-raw/parallel-tool-calls-stream-include-usage.sse'));
const REASONING = framesFromChunksFile(fixture('openai-compatible/deepseek-reasoning.chunks.txt'));
const MISTRAL = framesFromChunksFile(fixture('openai-compatible/mistral-tool-call.chunks.txt'));
/** The reasoning stream's first events, cut where one ends (after some reasoning, before its answer). */
const REASONING_START = REASONING.subarray(0, frameEnds(REASONING).find((end) => end > 3000));
/** The wire with the clock's `created_at` zeroed (two replays may straddle a second). */
const unclocked = (wire: string) => wire.replace(/"created_at":\d+/g, '"created_at":0');

const charge = (kind: 'exact' | 'estimate', cost: number, tokens: TokenUsage = { input: 18, cachedInput: 0, output: 219, reasoning: 0 }): Charge => ({
  settlement: { kind, tokens, status: 200 },
  cost,
  record: {} as UsageRecord,
});

function parse(wire: string): Json[] {
  return wire
    .split('\n\n')
    .filter(Boolean)
    .map((frame) => {
      const [name, data] = frame.split('\n');
      const json = JSON.parse(data!.slice('data: '.length));
      assert.equal(name, `event: ${json.type}`);
      return json;
    });
}

/** Bytes → decoder → chat translator → the Responses stream, one push per read; then the settled end. */
function replay(bytes: Buffer, splitAt: readonly number[] = [], namespaces: ReadonlyMap<string, string> = new Map()) {
  const decoder = frameDecoder('sse');
  const stream = new ChatResponsesStream(new OpenAIChatStreamTranslator(TARGET), BODY, 'req_1', namespaces);
  let wire = '';
  let start = 0;
  const feed = (events: readonly { event: string | undefined; data: string }[]) => {
    for (const event of events) wire += stream.push(event);
  };
  for (const offset of [...splitAt, bytes.length]) {
    feed(decoder.push(bytes.subarray(start, offset)));
    start = offset;
  }
  feed(decoder.end());
  return { stream, wire };
}

function settled(bytes: Buffer, splitAt: readonly number[] = [], namespaces?: ReadonlyMap<string, string>) {
  const { stream, wire } = replay(bytes, splitAt, namespaces);
  const usage = stream.usage!;
  return { stream, events: parse(wire + stream.final(charge('exact', 1_234_000, usage.tokens))) };
}

function checkShape(events: Json[]): void {
  assert.deepEqual(
    events.map((e) => e.sequence_number),
    events.map((_, i) => i),
  );
  assert.deepEqual(
    events.slice(0, 2).map((e) => e.type),
    ['response.created', 'response.in_progress'],
  );
  const terminals = events.filter((e) => /^response\.(completed|incomplete|failed)$/.test(e.type));
  assert.equal(terminals.length, 1);
  assert.equal(terminals[0], events.at(-1));
  // Every item added is done, complete, and listed in the terminal response in output order.
  const added = events.filter((e) => e.type === 'response.output_item.added');
  const done = events.filter((e) => e.type === 'response.output_item.done');
  assert.deepEqual(
    added.map((e) => e.output_index),
    done.map((e) => e.output_index),
  );
  assert.deepEqual(
    done.map((e) => e.item),
    terminals[0].response.output,
  );
}

describe('ChatResponsesStream on recorded chat streams', () => {
  test('parallel tool calls: one function_call item each, arguments streamed then whole, call ids kept; usage in the Responses convention with its cost', () => {
    const { events } = settled(PARALLEL);
    checkShape(events);
    const terminal = events.at(-1);
    assert.equal(terminal.type, 'response.completed');
    const calls = terminal.response.output;
    assert.deepEqual(
      calls.map((item: Json) => [item.type, item.name, item.call_id, item.status]),
      [
        ['function_call', 'GetWeatherArgs', 'call_lQnnsesjFMWMQ5IeWPHzR4th', 'completed'],
        ['function_call', 'get_stock_price', 'call_2xjOUgaCdiwAcl9ZBL9LyMUU', 'completed'],
      ],
    );
    for (const [index, item] of calls.entries()) {
      const deltas = events.filter((e) => e.type === 'response.function_call_arguments.delta' && e.output_index === index).map((e) => e.delta);
      assert.equal(deltas.join(''), item.arguments);
      JSON.parse(item.arguments);
      const done = events.find((e) => e.type === 'response.function_call_arguments.done' && e.output_index === index);
      assert.equal(done.arguments, item.arguments);
    }
    const usage = terminal.response.usage;
    assert.equal(usage.cost, 0.001234);
    assert.equal(usage.input_tokens, usage.total_tokens - usage.output_tokens);
    assert.ok(usage.input_tokens_details && usage.output_tokens_details);
    assert.equal(terminal.response.id, 'resp_req_1');
    assert.equal(terminal.response.model, 'local-coder');
  });

  test("reasoning_content becomes a reasoning item's summary, then the message; the text is the deltas'", () => {
    const { events, stream } = settled(REASONING);
    checkShape(events);
    const [reasoning, message] = events.at(-1).response.output;
    assert.equal(reasoning.type, 'reasoning');
    const summary = events.filter((e) => e.type === 'response.reasoning_summary_text.delta').map((e) => e.delta).join('');
    assert.ok(summary.length > 0);
    assert.deepEqual(reasoning.summary, [{ type: 'summary_text', text: summary }]);
    assert.equal(message.type, 'message');
    const text = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
    assert.deepEqual(message.content, [{ type: 'output_text', text, annotations: [], logprobs: [] }]);
    assert.equal(events.find((e) => e.type === 'response.output_text.done').text, text);
    assert.equal(events.at(-1).response.usage.output_tokens, 219);
    assert.ok(stream.delivered() > 0);
  });

  test('the same bytes split at every offset give the same events (parallel tool calls and a Mistral call)', () => {
    for (const bytes of [PARALLEL, MISTRAL]) {
      const whole = unclocked(replay(bytes).wire);
      for (const offset of everyOffset(bytes.length)) assert.equal(unclocked(replay(bytes, [offset]).wire), whole, `split at ${offset}`);
    }
  });

  test('a call of a function flattened from a namespace comes back with that namespace', () => {
    const { events } = settled(PARALLEL, [], new Map([['get_stock_price', 'finance']]));
    const [weather, stock] = events.at(-1).response.output;
    assert.equal(weather.namespace, undefined);
    assert.equal(stock.namespace, 'finance');
  });

  test('a cut (growing hold) ends in one response.incomplete after what the client saw, with the estimate charged', () => {
    const { stream, wire } = replay(REASONING_START);
    stream.markDelivered();
    const events = parse(wire + stream.cut(charge('estimate', 5_000, { input: 10, cachedInput: 0, output: 40, reasoning: 0 })));
    const terminal = events.at(-1);
    assert.equal(terminal.type, 'response.incomplete');
    assert.deepEqual(terminal.response.incomplete_details, { reason: 'max_output_tokens' });
    assert.equal(terminal.response.usage.output_tokens, 40);
    assert.equal(terminal.sequence_number, events.length - 1);
  });

  test('a failure mid-stream is one response.failed with the usage charged (an estimate above zero once output went out)', () => {
    const { stream, wire } = replay(REASONING_START);
    assert.ok(stream.sawOutput && stream.delivered() > 0);
    const failed = parse(wire + stream.error(new GatewayError('upstream_error', { message: 'The upstream failed.' }), charge('estimate', 9_000, { input: 10, cachedInput: 0, output: stream.delivered(), reasoning: 0 }))).at(-1);
    assert.equal(failed.type, 'response.failed');
    assert.equal(failed.response.error.code, 'server_error');
    assert.ok(failed.response.usage.output_tokens > 0);
  });

  test('a length finish is response.incomplete (max_output_tokens)', () => {
    const text = MISTRAL.toString('utf8').replace('"finish_reason":"tool_calls"', '"finish_reason":"length"');
    const { events } = settled(Buffer.from(text));
    assert.equal(events.at(-1).type, 'response.incomplete');
    assert.deepEqual(events.at(-1).response.incomplete_details, { reason: 'max_output_tokens' });
  });
});

describe('a whole chat completion as a Response', () => {
  test('reasoning summary, message, function calls (ids mapped back), status and usage with cached tokens included in input', () => {
    const completion = {
      id: 'chatcmpl-1',
      created: 1,
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: { role: 'assistant', content: 'Let me check.', reasoning_content: 'The user wants weather.', tool_calls: [{ id: 'functions.get_weather:0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        },
      ],
    };
    const usage = asResponsesUsage(readOpenAIUsage({ prompt_tokens: 100, completion_tokens: 30, total_tokens: 130, prompt_tokens_details: { cached_tokens: 60 }, completion_tokens_details: { reasoning_tokens: 12 } }));
    const response = responseOfCompletion(completion, usage, BODY, 'resp_req_9', new Map());
    assert.equal(response.id, 'resp_req_9');
    assert.equal(response.status, 'completed');
    const [reasoning, message, call] = response.output as Json[];
    assert.deepEqual(reasoning.summary, [{ type: 'summary_text', text: 'The user wants weather.' }]);
    assert.equal(message.content[0].text, 'Let me check.');
    assert.match(call.call_id, /^call_[A-Za-z0-9_-]{24}$/);
    assert.match(call.id, /^fc_/);
    assert.deepEqual(response.usage, { input_tokens: 100, input_tokens_details: { cached_tokens: 60, cache_write_tokens: 0 }, output_tokens: 30, output_tokens_details: { reasoning_tokens: 12 }, total_tokens: 130 });
  });
});
