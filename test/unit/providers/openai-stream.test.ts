// OpenAI-style SSE events (OpenAI, Azure, DeepSeek, Mistral, Groq, xAI, vLLM) → client chunks + usage.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { OpenAIChatStreamTranslator } from '../../../src/providers/openai/stream.js';
import { UpstreamFailureError, type JsonObject } from '../../../src/providers/types.js';
import type { SseEvent } from '../../../src/providers/framing/sse.js';
import { testCompatibleProvider, testTarget } from '../../support/provider-fixture.js';
import { countsOf } from '../../support/token-counts.js';

const FIXTURES = new URL('../../fixtures/upstream/', import.meta.url);

const TARGET = testTarget({ provider: testCompatibleProvider() });

function translator(): OpenAIChatStreamTranslator {
  return new OpenAIChatStreamTranslator(TARGET);
}

function ev(payload: unknown): SseEvent {
  return { event: undefined, data: typeof payload === 'string' ? payload : JSON.stringify(payload) };
}

function recordedEvents(file: string): SseEvent[] {
  return readFileSync(new URL(file, FIXTURES), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => ev(line));
}

/** Runs events through a fresh translator; returns it and the chunks it relayed. */
function replay(events: readonly SseEvent[]): { t: OpenAIChatStreamTranslator; relayed: JsonObject[] } {
  const t = translator();
  const relayed: JsonObject[] = [];
  for (const event of events) {
    const chunk = t.onEvent(event);
    if (chunk) relayed.push(chunk);
  }
  return { t, relayed };
}

function chunk(delta: JsonObject, extra: JsonObject = {}): JsonObject {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'upstream-model',
    choices: [{ index: 0, delta, finish_reason: null }],
    ...extra,
  };
}

function deltaOf(relayed: JsonObject): JsonObject {
  return ((relayed.choices as JsonObject[])[0]!.delta as JsonObject);
}

describe('OpenAIChatStreamTranslator: usage', () => {
  test('takes the usage of the final choices: [] chunk and relays nothing for it', () => {
    const t = translator();
    assert.notEqual(t.onEvent(ev(chunk({ content: 'Hi' }))), null);
    const usageChunk = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'm', choices: [], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } };
    assert.equal(t.onEvent(ev(usageChunk)), null);
    assert.deepEqual(countsOf(t.usage!.tokens), { input: 9, cachedInput: 0, output: 2, reasoning: 0 });
  });

  test('uses the last usage of running totals on every chunk, never a sum', () => {
    const events = [
      ev(chunk({ content: 'a' }, { usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } })),
      ev(chunk({ content: 'b' }, { usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } })),
      ev(chunk({ content: 'c' }, { usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 } })),
      ev({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 } }),
    ];
    const { t, relayed } = replay(events);
    assert.equal(relayed.length, 3);
    assert.deepEqual(countsOf(t.usage!.tokens), { input: 10, cachedInput: 0, output: 3, reasoning: 0 });
  });

  test('uses the last reported figure even when it is not the largest', () => {
    const { t } = replay([
      ev(chunk({ content: 'a' }, { usage: { prompt_tokens: 12, completion_tokens: 9 } })),
      ev(chunk({ content: 'b' }, { usage: { prompt_tokens: 11, completion_tokens: 7 } })),
    ]);
    assert.deepEqual(countsOf(t.usage!.tokens), { input: 11, cachedInput: 0, output: 7, reasoning: 0 });
  });

  test('strips usage from every relayed chunk (the gateway sends the one usage chunk itself)', () => {
    const { relayed } = replay([ev(chunk({ content: 'a' }, { usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } }))]);
    assert.equal(relayed[0]!.usage ?? null, null);
  });

  test('captures usage on the finish chunk (Mistral, recorded) and strips it from the relayed chunk', () => {
    const { t, relayed } = replay(recordedEvents('openai-compatible/mistral-tool-call.chunks.txt'));
    assert.equal(relayed.length, 2);
    assert.equal(relayed[1]!.usage ?? null, null);
    assert.equal((relayed[1]!.choices as JsonObject[])[0]!.finish_reason, 'tool_calls');
    assert.deepEqual(countsOf(t.usage!.tokens), { input: 124, cachedInput: 0, output: 22, reasoning: 0 });
    assert.equal(t.finished, false, 'the recording has no [DONE]');
  });

  test('captures usage on the finish chunk (DeepSeek reasoner, recorded)', () => {
    const { t, relayed } = replay(recordedEvents('openai-compatible/deepseek-reasoning.chunks.txt'));
    assert.deepEqual(countsOf(t.usage!.tokens), { input: 18, cachedInput: 0, output: 219, reasoning: 205 });
    const last = relayed.at(-1)!;
    assert.equal((last.choices as JsonObject[])[0]!.finish_reason, 'stop');
    assert.equal(last.usage ?? null, null);
    const reasoning = relayed.map((c) => deltaOf(c).reasoning_content).filter((r) => typeof r === 'string').join('');
    assert.ok(reasoning.startsWith('We'), reasoning.slice(0, 40));
  });

  test('captures usage on the finish chunk (Groq, recorded)', () => {
    const { t } = replay(recordedEvents('openai-compatible/groq-tool-call.chunks.txt'));
    assert.deepEqual(countsOf(t.usage!.tokens), { input: 210, cachedInput: 0, output: 15, reasoning: 0 });
  });

  test('reads xAI usage whose reasoning is outside completion_tokens (recorded)', () => {
    const { t } = replay(recordedEvents('openai-compatible/xai-tool-call.chunks.txt'));
    assert.deepEqual(countsOf(t.usage!.tokens), { input: 307, cachedInput: 306, output: 253, reasoning: 227 });
    assert.equal(t.usage!.openai.completion_tokens, 253);
  });

  test('keeps the previous usage when a later usage object is unreadable', () => {
    const { t } = replay([
      ev(chunk({ content: 'a' }, { usage: { prompt_tokens: 5, completion_tokens: 1 } })),
      ev(chunk({ content: 'b' }, { usage: { prompt_tokens: 'x' } })),
    ]);
    assert.deepEqual(countsOf(t.usage!.tokens), { input: 5, cachedInput: 0, output: 1, reasoning: 0 });
  });

  test('reports no usage when the upstream sent none', () => {
    const { t } = replay([ev(chunk({ content: 'a' })), ev('[DONE]')]);
    assert.equal(t.usage, null);
  });
});

describe('OpenAIChatStreamTranslator: Azure', () => {
  test('replays the recorded Azure stream: prelude dropped, chunks normalised, usage read', () => {
    const events = recordedEvents('openai/azure-model-router.1.chunks.txt');
    const t = translator();
    assert.equal(t.onEvent(events[0]!), null, 'the prompt-filter prelude is not relayed');
    assert.equal(t.id, '');
    const relayed: JsonObject[] = [];
    for (const event of events.slice(1)) {
      const out = t.onEvent(event);
      if (out) relayed.push(out);
    }
    assert.equal(relayed.length, 6);
    for (const c of relayed) {
      assert.equal(c.model, 'client-model');
      assert.equal(c.object, 'chat.completion.chunk');
      assert.equal('system_fingerprint' in c, false, 'system_fingerprint: null is removed');
    }
    assert.equal(relayed.map((c) => deltaOf(c).content ?? '').join(''), 'Capital of Denmark.');
    assert.equal(t.id, 'chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt');
    assert.equal(t.created, 1_762_317_021);
    assert.deepEqual(countsOf(t.usage!.tokens), { input: 15, cachedInput: 0, output: 78, reasoning: 64 });
  });

  test('does not let a prelude or usage chunk with id "" and created 0 overwrite id and created', () => {
    const t = translator();
    t.onEvent(ev(chunk({ content: 'x' }, { id: 'chatcmpl-real', created: 1_762_000_000 })));
    const prelude = { choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: [{ prompt_index: 0, content_filter_results: {} }] };
    assert.equal(t.onEvent(ev(prelude)), null);
    assert.equal(t.onEvent(ev({ ...prelude, prompt_filter_results: undefined, usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } })), null);
    assert.equal(t.id, 'chatcmpl-real');
    assert.equal(t.created, 1_762_000_000);
    assert.deepEqual(countsOf(t.usage!.tokens), { input: 3, cachedInput: 0, output: 4, reasoning: 0 });
  });

  test('keeps a non-null system_fingerprint', () => {
    const out = translator().onEvent(ev(chunk({ content: 'x' }, { system_fingerprint: 'fp_abc' })))!;
    assert.equal(out.system_fingerprint, 'fp_abc');
  });
});

describe('OpenAIChatStreamTranslator: events', () => {
  test('[DONE] sets finished and relays nothing', () => {
    const t = translator();
    t.onEvent(ev(chunk({ content: 'x' })));
    assert.equal(t.finished, false);
    assert.equal(t.onEvent(ev('[DONE]')), null);
    assert.equal(t.finished, true);
  });

  test('throws UpstreamFailureError for an error event', () => {
    const t = translator();
    assert.throws(
      () => t.onEvent(ev({ error: { message: 'The server is overloaded', type: 'server_error', code: 'overloaded', param: null } })),
      (error: unknown) => {
        assert.ok(error instanceof UpstreamFailureError);
        assert.deepEqual(error.failure, {
          status: 0,
          message: 'The server is overloaded',
          type: 'server_error',
          code: 'overloaded',
          param: undefined,
          retryAfter: undefined,
        });
        return true;
      },
    );
  });

  test('throws UpstreamFailureError for an error event whose error is a string', () => {
    assert.throws(
      () => translator().onEvent(ev({ error: 'upstream exploded' })),
      (error: unknown) => error instanceof UpstreamFailureError && error.failure.message === 'upstream exploded' && error.failure.status === 0,
    );
  });

  test('throws UpstreamFailureError for malformed JSON and for JSON that is not an object', () => {
    for (const data of ['{"id": "chatcmpl-1", "choices": [', 'not json', '[1,2]', '"text"', '42']) {
      assert.throws(
        () => translator().onEvent(ev(data)),
        (error: unknown) => error instanceof UpstreamFailureError && error.failure.status === 502,
        data,
      );
    }
  });

  test("replaces the upstream model with the client's model", () => {
    const out = translator().onEvent(ev(chunk({ content: 'x' })))!;
    assert.equal(out.model, 'client-model');
  });

  test('relays every other field of the chunk unchanged', () => {
    const original = chunk({ content: 'x', refusal: null }, { obfuscation: 'abc', x_groq: { id: 'req_1' }, service_tier: 'default' });
    const out = translator().onEvent(ev(original))!;
    assert.deepEqual(out, { ...original, model: 'client-model' });
  });

  test('relays nothing for a chunk without choices', () => {
    assert.equal(translator().onEvent(ev({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm' })), null);
  });

  test("renames vLLM's delta.reasoning to reasoning_content", () => {
    const out = translator().onEvent(ev(chunk({ reasoning: 'Let me think' })))!;
    assert.deepEqual(deltaOf(out), { reasoning_content: 'Let me think' });
  });

  test('leaves reasoning_content alone when the upstream already sends it', () => {
    const out = translator().onEvent(ev(chunk({ reasoning_content: 'thinking', content: null })))!;
    assert.deepEqual(deltaOf(out), { reasoning_content: 'thinking', content: null });
  });
});

describe('OpenAIChatStreamTranslator: tool calls', () => {
  test("gives Mistral's index-less tool calls indexes 0, 1, ... and type 'function'", () => {
    const t = translator();
    const first = t.onEvent(ev(chunk({ tool_calls: [{ id: 'call_a', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] })))!;
    const second = t.onEvent(ev(chunk({ tool_calls: [{ id: 'call_b', function: { name: 'time', arguments: '{}' } }] })))!;
    assert.deepEqual(deltaOf(first).tool_calls, [
      { id: 'call_a', function: { name: 'weather', arguments: '{"city":"Paris"}' }, index: 0, type: 'function' },
    ]);
    assert.deepEqual(deltaOf(second).tool_calls, [{ id: 'call_b', function: { name: 'time', arguments: '{}' }, index: 1, type: 'function' }]);
  });

  test('numbers several index-less tool calls in one delta in order', () => {
    const out = translator().onEvent(
      ev(chunk({ tool_calls: [{ id: 'a', function: { name: 'f', arguments: '{}' } }, { id: 'b', function: { name: 'g', arguments: '{}' } }] })),
    )!;
    const calls = deltaOf(out).tool_calls as JsonObject[];
    assert.deepEqual(calls.map((c) => [c.index, c.type]), [[0, 'function'], [1, 'function']]);
  });

  test('gives a continuation without id the index of the last tool call', () => {
    const t = translator();
    t.onEvent(ev(chunk({ tool_calls: [{ id: 'a', function: { name: 'f', arguments: '' } }] })));
    t.onEvent(ev(chunk({ tool_calls: [{ id: 'b', function: { name: 'g', arguments: '' } }] })));
    const more = t.onEvent(ev(chunk({ tool_calls: [{ function: { arguments: '{"x":1}' } }] })))!;
    assert.deepEqual(deltaOf(more).tool_calls, [{ function: { arguments: '{"x":1}' }, index: 1 }]);
  });

  test('leaves tool calls that already have an index untouched', () => {
    const calls = [
      { index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } },
    ];
    const t = translator();
    const out = t.onEvent(ev(chunk({ tool_calls: calls })))!;
    assert.deepEqual(deltaOf(out).tool_calls, calls);
    const cont = t.onEvent(ev(chunk({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] })))!;
    assert.deepEqual(deltaOf(cont).tool_calls, [{ index: 0, function: { arguments: '{}' } }]);
  });

  test('numbers the tool calls of each choice separately (n > 1)', () => {
    const t = translator();
    const out = t.onEvent(
      ev({
        id: 'chatcmpl-1',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [
          { index: 0, delta: { tool_calls: [{ id: 'a', function: { name: 'f', arguments: '{}' } }] }, finish_reason: null },
          { index: 1, delta: { tool_calls: [{ id: 'b', function: { name: 'g', arguments: '{}' } }] }, finish_reason: null },
        ],
      }),
    )!;
    const indexes = (out.choices as JsonObject[]).map((c) => ((c.delta as JsonObject).tool_calls as JsonObject[])[0]!.index);
    assert.deepEqual(indexes, [0, 0]);
  });

  test('renumbers upstream tool call indexes that do not start at 0 densely from 0', () => {
    const t = translator();
    const first = t.onEvent(ev(chunk({ tool_calls: [{ index: 1, id: 'a', type: 'function', function: { name: 'f', arguments: '' } }] })))!;
    const cont = t.onEvent(ev(chunk({ tool_calls: [{ index: 1, function: { arguments: '{}' } }] })))!;
    const second = t.onEvent(ev(chunk({ tool_calls: [{ index: 2, id: 'b', type: 'function', function: { name: 'g', arguments: '{}' } }] })))!;
    assert.equal((deltaOf(first).tool_calls as JsonObject[])[0]!.index, 0);
    assert.equal((deltaOf(cont).tool_calls as JsonObject[])[0]!.index, 0);
    assert.equal((deltaOf(second).tool_calls as JsonObject[])[0]!.index, 1);
  });

  test('continues numbering after indexed calls when a later call has none', () => {
    const t = translator();
    t.onEvent(ev(chunk({ tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] })));
    const out = t.onEvent(ev(chunk({ tool_calls: [{ id: 'b', function: { name: 'g', arguments: '{}' } }] })))!;
    assert.equal((deltaOf(out).tool_calls as JsonObject[])[0]!.index, 1);
  });
});
