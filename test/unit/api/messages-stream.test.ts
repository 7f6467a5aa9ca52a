// One streamed Messages attempt on a native cell (src/api/anthropic-messages/stream.ts): events pass
// through unchanged, usage is read from message_start and message_delta, the final message_delta and
// message_stop wait for the settlement (then the one message_delta carries usage.cost), a cut ends like a
// max_tokens stop, an error event is a failure, and the output delivered is metered for an estimate.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MessagesClientStream } from '../../../src/api/anthropic-messages/stream.js';
import type { TokenUsage } from '../../../src/billing/pricing.js';
import { GatewayError } from '../../../src/errors.js';
import type { Charge } from '../../../src/pipeline/admission/reservation.js';
import { UpstreamFailureError, type FramedEvent } from '../../../src/providers/types.js';
import type { UsageRecord } from '../../../src/storage/types.js';
import { countText } from '../../../src/tokens/count-text.js';
import { anthropicErrorEvent, anthropicStreamEvents, ANTHROPIC_TEXT, ANTHROPIC_THINKING } from '../../support/mock-anthropic.js';

const REQUEST = { model: 'claude-sonnet-4-5', max_tokens: 2000, messages: [{ role: 'user', content: 'Hi' }] };
const THINKING = { ...REQUEST, thinking: { type: 'enabled', budget_tokens: 1024 } };

const events = (body: Record<string, unknown>, cache = {}) => anthropicStreamEvents(body, cache) as Array<{ event: string; data: string }>;
const framed = (e: { event: string; data: string }): FramedEvent => ({ event: e.event, data: e.data });
const open = () => new MessagesClientStream('req_gw', () => false);
const charge = (kind: 'exact' | 'estimate', cost: number, tokens: TokenUsage = { input: 21, cachedInput: 0, output: 9, reasoning: 0 }): Charge => ({
  settlement: { kind, tokens, status: 200 },
  cost,
  record: {} as UsageRecord,
});
const parse = (frames: string) =>
  frames
    .split('\n\n')
    .filter(Boolean)
    .map((frame) => {
      const [event, data] = frame.split('\n');
      return { event: event!.slice(7), data: JSON.parse(data!.slice(6)) as Record<string, unknown> };
    });

describe('MessagesClientStream', () => {
  test('passes every event through as `event: X\\ndata: Y` with the data bytes unchanged, holding back the end', () => {
    const stream = open();
    const upstream = events(THINKING);
    let out = '';
    for (const e of upstream) out += stream.push(framed(e));
    const expected = upstream.filter((e) => e.event !== 'message_delta' && e.event !== 'message_stop').map((e) => `event: ${e.event}\ndata: ${e.data}\n\n`);
    assert.equal(out, expected.join(''));
    assert.deepEqual([stream.finished, stream.sawOutput, stream.sawFinish], [true, true, true]);
  });

  test('final() writes the held message_delta with usage.cost added, then message_stop as sent', () => {
    const stream = open();
    const upstream = events(REQUEST);
    for (const e of upstream) stream.push(framed(e));
    const end = stream.final(charge('exact', 171_000));
    const [delta, stop] = parse(end);
    const original = JSON.parse(upstream.at(-2)!.data) as { usage: Record<string, unknown> };
    assert.deepEqual(delta, { event: 'message_delta', data: { ...original, usage: { ...original.usage, cost: 0.000171 } } });
    assert.deepEqual(stop, { event: 'message_stop', data: { type: 'message_stop' } });
    assert.ok(end.endsWith(`event: message_stop\ndata: ${upstream.at(-1)!.data}\n\n`));
  });

  test('reads usage from message_start and message_delta into canonical counts (cache reads and writes inside input)', () => {
    const stream = open();
    const upstream = events(THINKING, { read: 1000, creation: 300, creation1h: 100 });
    for (const e of upstream.slice(0, -2)) stream.push(framed(e));
    assert.equal(stream.usage === null, true, 'no usage before message_delta (message_start’s output count is a placeholder)');
    assert.deepEqual(stream.knownInput, { input: 1321, cachedInput: 1000, output: 0, reasoning: 0, cacheWrite: 300, cacheWrite1h: 100, modifiers: { tier: 'standard' } });
    for (const e of upstream.slice(-2)) stream.push(framed(e));
    assert.deepEqual(stream.usage?.tokens, { input: 1321, cachedInput: 1000, output: 39, reasoning: countText(ANTHROPIC_THINKING), cacheWrite: 300, cacheWrite1h: 100, modifiers: { tier: 'standard' } });
  });

  test('creation counts above the per-lifetime breakdown are 1-hour writes when the request asked for 1 h', () => {
    const usage = { input_tokens: 5, cache_creation_input_tokens: 400, cache_read_input_tokens: 0, output_tokens: 3, cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 100 } };
    const run = (askedOneHour: boolean) => {
      const stream = new MessagesClientStream('req', () => askedOneHour);
      stream.push({ event: 'message_start', data: JSON.stringify({ type: 'message_start', message: { id: 'm', usage: { ...usage, output_tokens: 1 } } }) });
      stream.push({ event: 'message_delta', data: JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage }) });
      return stream.usage!.tokens;
    };
    assert.deepEqual([run(true).cacheWrite, run(true).cacheWrite1h], [400, 300]);
    assert.deepEqual([run(false).cacheWrite, run(false).cacheWrite1h], [400, 100]);
  });

  test('meters text, thinking and tool-input deltas (never signatures) for an estimate', () => {
    const stream = open();
    for (const e of events(THINKING).slice(0, -2)) stream.push(framed(e));
    assert.equal(stream.delivered(), countText(ANTHROPIC_THINKING + ANTHROPIC_TEXT));
    const tools = open();
    const withTool = events({ ...REQUEST, tools: [{ name: 'get_weather', input_schema: { type: 'object' } }] });
    for (const e of withTool.slice(0, -2)) tools.push(framed(e));
    assert.ok(tools.delivered() > countText("I'll call get_weather."), 'the tool name and its input count too');
  });

  test('cut() closes the blocks the client saw open and ends like a max_tokens stop, with the estimate and its cost', () => {
    const stream = open();
    const upstream = events(REQUEST);
    // message_start, content_block_start, ping, two text deltas: the block is still open.
    for (const e of upstream.slice(0, 5)) stream.push(framed(e));
    stream.markDelivered();
    // The next read (the rest of the block, its stop) is withheld by the hold: the client never sees it.
    for (const e of upstream.slice(5, -2)) stream.push(framed(e));
    const frames = parse(stream.cut(charge('estimate', 1_000, { input: 21, cachedInput: 0, output: 4, reasoning: 0 })));
    assert.deepEqual(
      frames.map((f) => f.event),
      ['content_block_stop', 'message_delta', 'message_stop'],
    );
    assert.deepEqual(frames[0]!.data, { type: 'content_block_stop', index: 0 });
    assert.deepEqual(frames[1]!.data, {
      type: 'message_delta',
      delta: { stop_reason: 'max_tokens', stop_sequence: null },
      usage: { input_tokens: 21, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 4, cost: 0.000001 },
    });
  });

  test('cut() of a stream whose first read was already beyond the hold gives the client the message start, then the end', () => {
    const stream = open();
    const upstream = events(REQUEST);
    for (const e of upstream.slice(0, 5)) stream.push(framed(e));
    const frames = parse(stream.cut(charge('estimate', 63_000, { input: 21, cachedInput: 0, output: 0, reasoning: 0 })));
    assert.deepEqual(
      frames.map((f) => f.event),
      ['message_start', 'message_delta', 'message_stop'],
    );
    assert.deepEqual(frames[0]!.data, JSON.parse(upstream[0]!.data));
  });

  test('an error event is a failure that keeps the upstream data; error() writes it, or the gateway error in the envelope', () => {
    const stream = open();
    const error = anthropicErrorEvent('overloaded_error', 'Overloaded') as { event: string; data: string };
    assert.throws(
      () => stream.push(framed(error)),
      (thrown: unknown) => thrown instanceof UpstreamFailureError && thrown.failure.status === 529 && thrown.failure.body === error.data,
    );
    assert.equal(stream.error(new GatewayError('upstream_error', { status: 529, upstreamBody: error.data })), `event: error\ndata: ${error.data}\n\n`);
    assert.deepEqual(parse(stream.error(new GatewayError('internal_error'))), [
      { event: 'error', data: { type: 'error', error: { type: 'api_error', message: 'Internal gateway error.' }, request_id: 'req_gw' } },
    ]);
  });

  test('a malformed event is a failure', () => {
    assert.throws(() => open().push({ event: 'content_block_delta', data: '{not json' }), UpstreamFailureError);
  });
});
