// Gemini stream events → OpenAI chunks: one chunk per event, cumulative usage, tool calls, streamed arguments.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { geminiAdapter } from '../../../src/providers/gemini/index.js';
import { PartialArgs, parseJsonPath } from '../../../src/providers/gemini/partial-args.js';
import { UpstreamFailureError, type ChatStreamTranslator, type JsonObject } from '../../../src/providers/types.js';
import { testProvider, testTarget } from '../../support/provider-fixture.js';

const TARGET = testTarget({ provider: testProvider({ kind: 'gemini' }), upstreamModel: 'gemini-2.5-pro', clientModel: 'pro' });

function run(...payloads: unknown[]): { t: ChatStreamTranslator; out: (JsonObject | null)[] } {
  const t = geminiAdapter.createChatStreamTranslator(TARGET);
  const out = payloads.map((payload) => t.onEvent({ event: undefined, data: typeof payload === 'string' ? payload : JSON.stringify(payload) }));
  return { t, out };
}

function event(parts: JsonObject[], extra: JsonObject = {}, candidate: JsonObject = {}): JsonObject {
  return { candidates: [{ content: { role: 'model', parts }, index: 0, ...candidate }], responseId: 'r1', ...extra };
}

function choice(chunk: JsonObject | null | undefined, i = 0): JsonObject {
  return (chunk?.choices as JsonObject[])[i]!;
}

function delta(chunk: JsonObject | null | undefined, i = 0): JsonObject {
  return choice(chunk, i).delta as JsonObject;
}

void describe('GeminiChatStreamTranslator', () => {
  test('relays text as content and thoughts as reasoning_content, one chunk per event, role on the first only', () => {
    const { out, t } = run(event([{ text: 'Thinking…', thought: true }, { text: 'Hi' }]), event([{ text: ' there' }]));
    assert.deepEqual(out[0], {
      id: 'chatcmpl-r1',
      object: 'chat.completion.chunk',
      created: t.created,
      model: 'pro',
      choices: [{ index: 0, delta: { role: 'assistant', reasoning_content: 'Thinking…', content: 'Hi' }, logprobs: null, finish_reason: null }],
    });
    assert.deepEqual(delta(out[1]), { content: ' there' });
    assert.equal(t.id, 'chatcmpl-r1');
  });

  test('ends on the event with finishReason: that chunk carries the mapped reason and the stream is finished', () => {
    const { out, t } = run(event([{ text: 'a' }]), event([{ text: '' }], {}, { finishReason: 'MAX_TOKENS' }));
    assert.equal(choice(out[0]).finish_reason, null);
    assert.deepEqual(choice(out[1]), { index: 0, delta: {}, logprobs: null, finish_reason: 'length' });
    assert.equal(t.finished, true);
  });

  test('keeps the last usage with counts: events with only trafficType do not erase it, and none are summed', () => {
    const usage = (prompt: number, candidates: number, thoughts: number): JsonObject => ({ promptTokenCount: prompt, candidatesTokenCount: candidates, thoughtsTokenCount: thoughts });
    const { t } = run(
      event([{ text: 'a' }], { usageMetadata: usage(9, 10, 256) }),
      event([{ text: 'b' }], { usageMetadata: usage(9, 29, 256) }),
      event([{ text: '' }], { usageMetadata: { trafficType: 'ON_DEMAND' } }, { finishReason: 'STOP' }),
    );
    assert.deepEqual(t.usage?.tokens, { input: 9, cachedInput: 0, output: 285, reasoning: 256 });
  });

  test('relays nothing for an event with nothing to say, and usage-only events', () => {
    const { out, t } = run({ usageMetadata: { promptTokenCount: 3 }, responseId: 'r1' }, event([{ text: '' }]), event([{ text: 'x' }]));
    assert.deepEqual(out.slice(0, 2), [null, null]);
    assert.equal((delta(out[2]) as JsonObject).role, 'assistant', 'the role waits for the first relayed chunk');
    assert.equal(t.usage?.tokens.input, 3);
  });

  test('relays whole function calls with indexes, ids and signatures, and finishes with tool_calls', () => {
    const { out } = run(
      event([{ functionCall: { name: 'a', args: { q: 1 } }, thoughtSignature: 'S1' }, { functionCall: { name: 'b', args: {} } }]),
      event([{ functionCall: { name: 'c' } }], {}, { finishReason: 'STOP' }),
    );
    const calls = delta(out[0]).tool_calls as JsonObject[];
    assert.deepEqual(calls.map((c) => ({ ...c, id: typeof c.id })), [
      { index: 0, id: 'string', type: 'function', function: { name: 'a', arguments: '{"q":1}' }, extra_content: { google: { thought_signature: 'S1' } } },
      { index: 1, id: 'string', type: 'function', function: { name: 'b', arguments: '{}' } },
    ]);
    assert.equal((delta(out[1]).tool_calls as JsonObject[])[0]!.index, 2);
    assert.equal(choice(out[1]).finish_reason, 'tool_calls');
  });

  test('streams partialArgs: opens the call at once, sends the assembled arguments when it ends', () => {
    const { out } = run(
      event([{ functionCall: { name: 'book', willContinue: true }, thoughtSignature: 'S' }]),
      event([{ functionCall: { partialArgs: [{ jsonPath: '$.city', stringValue: 'San ', willContinue: true }], willContinue: true } }]),
      event([{ functionCall: { partialArgs: [{ jsonPath: '$.city', stringValue: 'Francisco' }, { jsonPath: '$.nights', numberValue: 2 }], willContinue: true } }]),
      event([{ functionCall: { partialArgs: [{ jsonPath: '$.opts.late', boolValue: true }, { jsonPath: '$.opts.note', nullValue: 'NULL_VALUE' }], willContinue: true } }]),
      event([{ functionCall: {} }]),
    );
    const opening = (delta(out[0]).tool_calls as JsonObject[])[0]!;
    assert.deepEqual({ ...opening, id: 'x' }, { index: 0, id: 'x', type: 'function', function: { name: 'book', arguments: '' }, extra_content: { google: { thought_signature: 'S' } } });
    assert.deepEqual(out.slice(1, 4), [null, null, null]);
    const closing = (delta(out[4]).tool_calls as JsonObject[])[0]!;
    assert.deepEqual(closing, { index: 0, function: { arguments: '{"city":"San Francisco","nights":2,"opts":{"late":true,"note":null}}' } });
  });

  test('ends a streamed call at the next named call or at the finish, and a call that opens and ends in one event is one delta', () => {
    const { out } = run(
      event([{ functionCall: { name: 'a', willContinue: true } }]),
      event([{ functionCall: { partialArgs: [{ jsonPath: '$.x', numberValue: 1 }], willContinue: true } }, { functionCall: { name: 'b', partialArgs: [{ jsonPath: '$.y', stringValue: 'z' }] } }]),
      event([{ functionCall: { name: 'c', willContinue: true } }]),
      event([{ functionCall: { partialArgs: [{ jsonPath: '$.list[1]', stringValue: 'q' }], willContinue: true } }], {}, { finishReason: 'STOP' }),
    );
    const second = (delta(out[1]).tool_calls as JsonObject[]).map((c) => ({ index: c.index, name: (c.function as JsonObject).name, args: (c.function as JsonObject).arguments }));
    assert.deepEqual(second, [
      { index: 0, name: undefined, args: '{"x":1}' },
      { index: 1, name: 'b', args: '{"y":"z"}' },
    ]);
    assert.deepEqual(delta(out[3]).tool_calls, [{ index: 2, function: { arguments: '{"list":[null,"q"]}' } }]);
    assert.equal(choice(out[3]).finish_reason, 'tool_calls');
  });

  test('ignores partialArgs that arrive before any call was opened', () => {
    const { out } = run(event([{ functionCall: { partialArgs: [{ jsonPath: '$.x', numberValue: 1 }] } }]));
    assert.deepEqual(out, [null]);
  });

  test('answers a blocked prompt with a content_filter chunk and finishes', () => {
    const { out, t } = run({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 }, responseId: 'r9' });
    assert.deepEqual(choice(out[0]), { index: 0, delta: { role: 'assistant' }, logprobs: null, finish_reason: 'content_filter' });
    assert.equal(t.finished, true);
    assert.equal(t.usage?.tokens.input, 5);
  });

  test('keeps candidates apart and finishes only when every candidate has', () => {
    const two = (a: JsonObject, b: JsonObject): JsonObject => ({ candidates: [{ index: 0, ...a }, { index: 1, ...b }] });
    const { out, t } = run(
      two({ content: { parts: [{ text: 'A' }] } }, { content: { parts: [{ text: 'B' }] } }),
      two({ finishReason: 'STOP' }, { content: { parts: [{ text: 'b' }] } }),
    );
    assert.deepEqual((out[0]!.choices as JsonObject[]).map((c) => [c.index, c.delta]), [[0, { role: 'assistant', content: 'A' }], [1, { role: 'assistant', content: 'B' }]]);
    assert.equal(t.finished, false);
    t.onEvent({ event: undefined, data: JSON.stringify({ candidates: [{ index: 1, finishReason: 'STOP' }] }) });
    assert.equal(t.finished, true);
  });

  test('throws the error event as an UpstreamFailureError with the error code as status', () => {
    const { t } = run(event([{ text: 'a' }]));
    const error = { error: { code: 429, message: 'Resource exhausted', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '2s' }] } };
    assert.throws(
      () => t.onEvent({ event: undefined, data: JSON.stringify(error) }),
      (e: unknown) =>
        e instanceof UpstreamFailureError &&
        e.failure.status === 429 && e.failure.code === 'RESOURCE_EXHAUSTED' && e.failure.message === 'Resource exhausted' && e.failure.retryAfter === '2',
    );
  });

  test('throws a 502 UpstreamFailureError for an event that is not JSON', () => {
    assert.throws(() => run('{"candidates": ['), (e: unknown) => e instanceof UpstreamFailureError && e.failure.status === 502);
  });
});

void describe('partial arguments', () => {
  test('parses dotted, indexed and quoted JSON paths, and refuses anything else', () => {
    assert.deepEqual(parseJsonPath('$.a.b[0]["c d"][\'e\']'), ['a', 'b', 0, 'c d', 'e']);
    assert.equal(parseJsonPath('$'), undefined);
    assert.equal(parseJsonPath('a.b'), undefined);
    assert.equal(parseJsonPath('$..a'), undefined);
  });

  test('writes __proto__ as a plain key and never touches a prototype', () => {
    const args = new PartialArgs();
    args.apply([{ jsonPath: '$.__proto__.polluted', boolValue: true }]);
    assert.equal(({} as JsonObject).polluted, undefined);
    assert.equal(JSON.stringify(args.value), '{"__proto__":{"polluted":true}}');
  });

  test('replaces a string unless the previous fragment of that path said willContinue', () => {
    const args = new PartialArgs();
    args.apply([{ jsonPath: '$.s', stringValue: 'old' }, { jsonPath: '$.s', stringValue: 'new', willContinue: true }, { jsonPath: '$.s', stringValue: '!' }]);
    assert.deepEqual(args.value, { s: 'new!' });
  });
});
