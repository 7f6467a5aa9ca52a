// Contract tests for the gemini adapter: every recorded Gemini stream in test/fixtures/upstream/google-raw
// (see SOURCES.txt there) is replayed through the path the gateway runs (bytes → SseDecoder → translator →
// client chunks, see gemini-replay.ts) and checked against the recording and the official OpenAPI schema;
// the recorded non-stream bodies and the 429 go through parseChatResponse / parseError. Expected numbers
// are literals read off the recordings by hand; each says where it comes from.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import OpenAI from 'openai';
import type { TokenUsage } from '../../src/billing/pricing.js';
import { geminiAdapter } from '../../src/providers/gemini/index.js';
import type { JsonObject } from '../../src/providers/types.js';
import { encodeSseData, SSE_DONE } from '../../src/api/sse.js';
import { validateAgainst } from '../support/openapi.js';
import { GEMINI_CLIENT_MODEL, GEMINI_TARGET, geminiDigest, geminiFrames, replayGemini } from './gemini-replay.js';
import { everyOffset, type Replay } from './replay.js';

const UPSTREAM = new URL('../fixtures/upstream/', import.meta.url);

interface ToolCallExpectation {
  readonly name: string;
  readonly args: JsonObject;
  /** The recorded thoughtSignature's first characters, or null when the call carried none. */
  readonly signature: string | null;
}

interface StreamCase {
  readonly name: string;
  readonly events: number;
  /** Chunks relayed to the client (events that carry text, a tool-call step or a finish). */
  readonly chunks: number;
  readonly id: string;
  readonly usage: TokenUsage;
  readonly content: string;
  readonly toolCalls: readonly ToolCallExpectation[];
  readonly finishReason: string;
}

const STREAM_CASES: readonly StreamCase[] = [
  {
    name: 'google-text',
    events: 3,
    chunks: 3, // two text events and the finish event (its only part is an empty text with a signature)
    id: 'chatcmpl-bH6LaZW8Fp_3nsEPqtaSwQ4',
    // last event: promptTokenCount 9, candidatesTokenCount 23, thoughtsTokenCount 185
    usage: { input: 9, cachedInput: 0, output: 23 + 185, reasoning: 185 },
    content: 'There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y',
    toolCalls: [],
    finishReason: 'stop',
  },
  {
    name: 'google-reasoning',
    events: 3,
    chunks: 3,
    id: 'chatcmpl-dX6LadKVC7SZ28oPr9yJoQs',
    // last event: promptTokenCount 9, candidatesTokenCount 29 (the first said 10), thoughtsTokenCount 256
    usage: { input: 9, cachedInput: 0, output: 29 + 256, reasoning: 256 },
    content: 'There are **3** "r"s in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y.',
    toolCalls: [],
    finishReason: 'stop',
  },
  {
    name: 'google-tool-call',
    events: 2,
    chunks: 2, // the whole functionCall, then an empty text with finishReason STOP
    id: 'chatcmpl-b36LacjwM668nsEP2tbsgQQ',
    // promptTokenCount 29, candidatesTokenCount 15, thoughtsTokenCount 45
    usage: { input: 29, cachedInput: 0, output: 15 + 45, reasoning: 45 },
    content: '',
    toolCalls: [{ name: 'weather', args: { location: 'San Francisco' }, signature: 'EqUCCqICAb4+9vsh8Pd5' }],
    finishReason: 'tool_calls',
  },
  {
    name: 'google-stream-tool-call-arguments',
    events: 8,
    // relayed: call 0 opens (event 1), call 0 ends (event 4, empty functionCall), call 1 opens (event 5),
    // call 1 ends with the finish (event 8); the partialArgs events 2, 3, 6, 7 only accumulate.
    chunks: 4,
    id: 'chatcmpl-dqHOab6xGLzWodAPkPuViA4',
    // events 1-7 carry only {trafficType}; event 8: prompt 26, candidates 23, thoughts 132
    usage: { input: 26, cachedInput: 0, output: 23 + 132, reasoning: 132 },
    content: '',
    toolCalls: [
      { name: 'getWeather', args: { location: 'Boston' }, signature: 'CiMBjz1rX25KieIB4d4A' },
      { name: 'getWeather', args: { location: 'San Francisco' }, signature: null },
    ],
    finishReason: 'tool_calls',
  },
];

interface StreamChoice {
  index?: number;
  finish_reason?: string | null;
  delta?: { content?: string; reasoning_content?: string; tool_calls?: JsonObject[] };
}

function choicesOf(chunk: JsonObject): StreamChoice[] {
  return Array.isArray(chunk.choices) ? (chunk.choices as StreamChoice[]) : [];
}

function joinContent(chunks: readonly JsonObject[], field: 'content' | 'reasoning_content'): string {
  return chunks.flatMap(choicesOf).map((choice) => choice.delta?.[field] ?? '').join('');
}

/** Tool calls as an OpenAI client builds them: one slot per index, arguments appended. */
function assemble(chunks: readonly JsonObject[]): { id: string; name: string; arguments: string; signature: string | null }[] {
  const calls: { id: string; name: string; arguments: string; signature: string | null }[] = [];
  for (const delta of chunks.flatMap(choicesOf).flatMap((choice) => choice.delta?.tool_calls ?? [])) {
    const index = delta.index as number;
    const fn = (delta.function ?? {}) as { name?: string; arguments?: string };
    const call = (calls[index] ??= { id: '', name: '', arguments: '', signature: null });
    if (typeof delta.id === 'string') call.id = delta.id;
    if (fn.name) call.name = fn.name;
    call.arguments += fn.arguments ?? '';
    const google = (delta.extra_content as { google?: { thought_signature?: string } } | undefined)?.google;
    if (google?.thought_signature) call.signature = google.thought_signature;
  }
  return calls;
}

function finishReasons(chunks: readonly JsonObject[]): [number, string][] {
  return chunks.flatMap(choicesOf).flatMap((c) => (typeof c.finish_reason === 'string' ? [[Number(c.index), c.finish_reason] as [number, string]] : []));
}

/** What the client receives after the relayed chunks: the gateway's final usage chunk and [DONE]. */
function clientSse(r: Replay): { text: string; finalChunk: JsonObject } {
  const finalChunk = { id: r.id, object: 'chat.completion.chunk', created: r.created, model: GEMINI_CLIENT_MODEL, choices: [], usage: { ...r.usage?.openai, cost: 0.0001 } };
  return { text: r.wire + encodeSseData(finalChunk) + SSE_DONE, finalChunk };
}

void test('the raw recordings are the chunk recordings framed as Gemini sends them, and every one has a case', () => {
  const raw = readdirSync(new URL('google-raw/', UPSTREAM)).filter((f) => f.endsWith('.sse'));
  assert.deepEqual(raw.sort(), STREAM_CASES.map((c) => `${c.name}.reframed.sse`).sort());
  for (const c of STREAM_CASES) {
    const framed = geminiFrames(new URL(`google/${c.name}.chunks.txt`, UPSTREAM));
    assert.ok(framed.equals(readFileSync(new URL(`google-raw/${c.name}.reframed.sse`, UPSTREAM))), c.name);
  }
});

for (const c of STREAM_CASES) {
  void describe(`replaying google-raw/${c.name}.reframed.sse through the gemini stream path`, () => {
    const bytes = readFileSync(new URL(`google-raw/${c.name}.reframed.sse`, UPSTREAM));
    const whole = replayGemini(bytes);

    void test('decodes every event and relays one chunk per event that has something to say', () => {
      assert.equal(whole.events, c.events);
      assert.equal(whole.chunks.length, c.chunks);
    });

    void test('reports the usage of the last event that has counts, output = candidates + thoughts', () => {
      assert.deepEqual(whole.usage?.tokens, c.usage);
      const { prompt_tokens, completion_tokens, total_tokens } = whole.usage?.openai ?? {};
      assert.deepEqual({ prompt_tokens, completion_tokens, total_tokens }, { prompt_tokens: c.usage.input, completion_tokens: c.usage.output, total_tokens: c.usage.input + c.usage.output });
      assert.deepEqual(whole.usage?.openai.completion_tokens_details, { reasoning_tokens: c.usage.reasoning });
    });

    void test('relays the content text exactly as recorded, and no reasoning (none of these parts is a thought)', () => {
      assert.equal(joinContent(whole.chunks, 'content'), c.content);
      assert.equal(joinContent(whole.chunks, 'reasoning_content'), '');
    });

    void test('assembles tool calls with call_ ids, the recorded names, arguments and thought signatures', () => {
      const calls = assemble(whole.chunks);
      assert.equal(calls.length, c.toolCalls.length);
      calls.forEach((call, i) => {
        const expected = c.toolCalls[i]!;
        assert.match(call.id, /^call_[0-9a-f]{32}$/);
        assert.equal(call.name, expected.name);
        assert.deepEqual(JSON.parse(call.arguments), expected.args);
        if (expected.signature === null) assert.equal(call.signature, null);
        else assert.ok(call.signature?.startsWith(expected.signature), `call ${i} signature`);
      });
      assert.equal(new Set(calls.map((call) => call.id)).size, calls.length, 'ids are distinct');
    });

    void test(`ends with finish_reason ${c.finishReason} on the last chunk, marks the stream finished, names the client model`, () => {
      assert.deepEqual(finishReasons(whole.chunks), [[0, c.finishReason]]);
      assert.equal(choicesOf(whole.chunks.at(-1)!)[0]?.finish_reason, c.finishReason);
      assert.equal(whole.finished, true);
      assert.equal(whole.id, c.id);
      for (const chunk of whole.chunks) {
        assert.equal(chunk.model, GEMINI_CLIENT_MODEL);
        assert.equal(chunk.id, c.id);
        assert.equal(chunk.usage, undefined);
      }
      assert.equal((choicesOf(whole.chunks[0]!)[0]?.delta as JsonObject | undefined)?.role, 'assistant', 'the first chunk names the role');
    });

    void test('emits only chunks that match CreateChatCompletionStreamResponse, and a valid final usage chunk', () => {
      const violations = whole.chunks.flatMap((chunk, i) => validateAgainst('CreateChatCompletionStreamResponse', chunk).map((v) => `chunk ${i}: ${v}`));
      assert.deepEqual(violations, []);
      assert.deepEqual(validateAgainst('CreateChatCompletionStreamResponse', clientSse(whole).finalChunk), []);
    });

    void test('lets the output meter see output and the finish', () => {
      assert.equal(whole.meter.sawOutput, true);
      assert.equal(whole.meter.sawFinish, true);
    });

    void test('gives the same output fed one byte per push as fed whole', () => {
      assert.equal(geminiDigest(bytes, everyOffset(bytes.length)), geminiDigest(bytes));
    });

    void test('gives the same output split into two pushes at every byte boundary', () => {
      const expected = geminiDigest(bytes);
      const bad = everyOffset(bytes.length).find((offset) => geminiDigest(bytes, [offset]) !== expected);
      assert.equal(bad, undefined, `split at byte ${bad} changed the output`);
    });

    void test('lets the official OpenAI SDK assemble the same message from the bytes the client receives', async () => {
      const { text } = clientSse(whole);
      const client = new OpenAI({
        apiKey: 'tg-contract-test',
        baseURL: 'http://gateway.invalid/v1',
        maxRetries: 0,
        fetch: () => Promise.resolve(new Response(text, { status: 200, headers: { 'content-type': 'text/event-stream' } })),
      });
      const completion = await client.chat.completions.stream({ model: GEMINI_CLIENT_MODEL, messages: [{ role: 'user', content: 'replay' }] }).finalChatCompletion();
      const choice = completion.choices[0]!;
      assert.equal(choice.finish_reason, c.finishReason);
      assert.equal(choice.message.content ?? '', c.content);
      const calls = (choice.message.tool_calls ?? []).map((call) => (call.type === 'function' ? { name: call.function.name, args: JSON.parse(call.function.arguments) as unknown } : {}));
      assert.deepEqual(calls, c.toolCalls.map(({ name, args }) => ({ name, args })));
      assert.equal(completion.usage?.completion_tokens, c.usage.output);
    });
  });
}

function readJson(name: string): JsonObject {
  return JSON.parse(readFileSync(new URL(name, UPSTREAM), 'utf8')) as JsonObject;
}

function asSentToClient(body: JsonObject, usage: JsonObject | undefined): JsonObject {
  return { ...body, usage: { ...usage, cost: 0.0001 } };
}

void describe('parsing the recorded Gemini non-stream bodies', () => {
  const cases = [
    // usageMetadata: prompt 9, candidates 28, thoughts 244
    { file: 'google/google-text.json', usage: { input: 9, cachedInput: 0, output: 28 + 244, reasoning: 244 }, content: 'There are **3** r\'s in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y.', finish: 'stop' },
    // prompt 9, candidates 29, thoughts 282
    { file: 'google/google-reasoning.json', usage: { input: 9, cachedInput: 0, output: 29 + 282, reasoning: 282 }, content: 'There are **3** "r"s in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y.', finish: 'stop' },
    // prompt 29, candidates 15, thoughts 893; one functionCall weather({location: 'San Francisco'})
    { file: 'google/google-tool-call.json', usage: { input: 29, cachedInput: 0, output: 15 + 893, reasoning: 893 }, content: null, finish: 'tool_calls' },
  ] as const;
  for (const c of cases) {
    void test(`${c.file} becomes a valid CreateChatCompletionResponse with ${c.usage.input} input and ${c.usage.output} output tokens`, () => {
      const raw = readJson(c.file);
      const parsed = geminiAdapter.parseChatResponse(raw, GEMINI_TARGET);
      assert.deepEqual(parsed.usage?.tokens, c.usage);
      assert.deepEqual(validateAgainst('CreateChatCompletionResponse', asSentToClient(parsed.body, parsed.usage?.openai)), []);
      assert.equal(parsed.body.model, GEMINI_CLIENT_MODEL);
      assert.equal(parsed.body.id, `chatcmpl-${String(raw.responseId)}`);
      const choice = (parsed.body.choices as JsonObject[])[0] as { message: JsonObject; finish_reason: string };
      assert.equal(choice.message.content, c.content);
      assert.equal(choice.finish_reason, c.finish);
    });
  }

  void test('google/google-tool-call.json keeps the call, its arguments and its thought signature', () => {
    const parsed = geminiAdapter.parseChatResponse(readJson('google/google-tool-call.json'), GEMINI_TARGET);
    const message = ((parsed.body.choices as JsonObject[])[0] as { message: { tool_calls: JsonObject[] } }).message;
    const [call] = message.tool_calls;
    assert.match(String(call?.id), /^call_/);
    assert.deepEqual(call?.function, { name: 'weather', arguments: '{"location":"San Francisco"}' });
    assert.deepEqual(call?.extra_content, { google: { thought_signature: 'EskgCsYgAb4+9vtF7/499YQS2bjZs3xcQI+iAl+ILn29nK1j0Kg6su7QsUUUk3nrAAfnS2w5WiVvlcCqu9fAebJ2cvfaEyBahEt5' } });
  });

  void test('google/google-429-retry-info.json becomes a 429 failure retrying after 35 s (34.4s rounded up)', () => {
    const text = readFileSync(new URL('google/google-429-retry-info.json', UPSTREAM), 'utf8');
    assert.deepEqual(geminiAdapter.parseError(429, text, {}), {
      status: 429,
      message: 'You exceeded your current quota, please check your plan.',
      type: 'RESOURCE_EXHAUSTED',
      code: 'RESOURCE_EXHAUSTED',
      param: undefined,
      retryAfter: '35',
    });
    assert.equal(geminiAdapter.parseError(429, text, { 'retry-after': '7' }).retryAfter, '7', 'the header wins');
  });
});
