// Contract tests for the OpenAI-family adapter (kinds `openai`, `openai-compatible`, and the OpenAI shape
// Azure sends): every recorded upstream stream in test/fixtures/upstream (see SOURCES.txt there) is replayed
// through the path the gateway runs (bytes → SseDecoder → OpenAIChatStreamTranslator.onEvent → client
// chunks, see test/contract/replay.ts), and what the client receives is checked against the recording and
// against the official OpenAPI schema. Expected numbers are literals read off the recordings by hand; each
// says where it comes from.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import type { TokenUsage } from '../../src/billing/pricing.js';
import { azureOpenAIAdapter } from '../../src/providers/azure-openai/index.js';
import { parseOpenAIError } from '../../src/providers/openai/errors.js';
import { parseOpenAIChatResponse, parseOpenAIEmbeddingResponse } from '../../src/providers/openai/response.js';
import type { JsonObject, UpstreamTarget } from '../../src/providers/types.js';
import { encodeSseData, SSE_DONE } from '../../src/api/sse.js';
import { validateAgainst } from '../support/openapi.js';
import { testProvider, testTarget } from '../support/provider-fixture.js';
import {
  CLIENT_MODEL,
  everyOffset,
  frameEnds,
  framesFromChunksFile,
  offsetsInsideUtf8Characters,
  replayDigest,
  replayStream,
  TARGET,
  type Replay,
  type TranslatorFactory,
} from './replay.js';
import { countsOf } from '../support/token-counts.js';

const UPSTREAM = new URL('../fixtures/upstream/', import.meta.url);

/** Long texts are pinned by length, SHA-256 and both ends; short ones are written out. */
type TextExpectation = string | { readonly length: number; readonly sha256: string; readonly starts: string; readonly ends: string };

interface ToolCallExpectation {
  readonly index: number;
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

interface StreamCase {
  /** Path under test/fixtures/upstream. */
  readonly file: string;
  /** `chunks`: one JSON payload per line, framed here as `data: …\n\n` + `data: [DONE]`; `raw`: SSE bytes as sent. */
  readonly framing: 'chunks' | 'raw';
  /** SSE events the decoder yields, [DONE] included. */
  readonly events: number;
  /** Chunks relayed to the client. */
  readonly chunks: number;
  readonly id: string;
  readonly created: number;
  readonly usage: TokenUsage | null;
  /** The token fields of the usage object the client will be sent (before the gateway adds `cost`). */
  readonly clientUsage: { readonly prompt_tokens: number; readonly completion_tokens: number; readonly total_tokens: number } | null;
  readonly content: TextExpectation;
  readonly reasoning: TextExpectation;
  readonly toolCalls: readonly ToolCallExpectation[];
  /** [choice index, finish_reason], in the order they arrive. */
  readonly finishReasons: readonly (readonly [number, string])[];
  readonly finished: boolean;
  /** Bytes above which splitting at every boundary is done per event window (see the split test). */
  readonly big: boolean;
}

// Every OpenAI-family stream recording in test/fixtures/upstream. Counts: `events` = payload lines + 1
// ([DONE]); `chunks` = payloads whose `choices` is non-empty (the usage-only chunk and Azure's prelude are
// swallowed: the gateway sends its own final usage chunk).
const STREAM_CASES: readonly StreamCase[] = [
  {
    file: 'openai/openai-text.chunks.txt',
    framing: 'chunks',
    events: 304, // 303 payload lines (no trailing newline) + [DONE]
    chunks: 302, // all but the final `choices: []` usage line
    id: 'chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0',
    created: 1770933892,
    // last line: usage {prompt_tokens 16, completion_tokens 300, total 316, cached_tokens 0, reasoning_tokens 0}
    usage: { input: 16, cachedInput: 0, output: 300, reasoning: 0 },
    clientUsage: { prompt_tokens: 16, completion_tokens: 300, total_tokens: 316 },
    // delta.content of lines 2..301 joined; it contains raw UTF-8 '—' (x2) and '’' (3 bytes each)
    content: {
      length: 1724,
      sha256: '53b2d9e583d02b3ff0a0e83be5beb61ce1d16ccddc7ab9f033e72ec8ef55c8e4',
      starts: '**Holiday Name:** Harmony Day\n\n**Date:**',
      ends: 'ed human experiences and mutual respect.',
    },
    reasoning: '',
    toolCalls: [],
    finishReasons: [[0, 'stop']], // line 302
    finished: true,
    big: true,
  },
  {
    file: 'openai/azure-model-router.1.chunks.txt',
    framing: 'chunks',
    events: 9, // 8 payload lines + [DONE]
    chunks: 6, // line 1 is the prelude (object "", choices [], prompt_filter_results), line 8 the usage chunk
    id: 'chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt', // lines 2..8 (the prelude's id is "")
    created: 1762317021, // lines 2..8 (the prelude's created is 0)
    // line 8: completion_tokens 78 (reasoning_tokens 64 inside it), prompt_tokens 15, cached_tokens 0, total 93
    usage: { input: 15, cachedInput: 0, output: 78, reasoning: 64 },
    clientUsage: { prompt_tokens: 15, completion_tokens: 78, total_tokens: 93 },
    content: 'Capital of Denmark.', // lines 2..6: "" + "Capital" + " of" + " Denmark" + "."
    reasoning: '',
    toolCalls: [],
    finishReasons: [[0, 'stop']], // line 7
    finished: true,
    big: false,
  },
  {
    file: 'openai-compatible/deepseek-reasoning.chunks.txt',
    framing: 'chunks',
    events: 221, // 220 payload lines + [DONE]
    chunks: 220, // usage rides on the finish chunk (line 220), so every line has a choice
    id: 'cac7192e-e619-40c6-96b0-ed4276bc03ac',
    created: 1764661832,
    // line 220: prompt 18, completion 219 (reasoning_tokens 205 inside it), total 237, cached 0 / prompt_cache_hit_tokens 0
    usage: { input: 18, cachedInput: 0, output: 219, reasoning: 205 },
    clientUsage: { prompt_tokens: 18, completion_tokens: 219, total_tokens: 237 },
    content: 'The word "strawberry" contains three "r"s.',
    // delta.reasoning_content joined over the reasoning lines
    reasoning: {
      length: 606,
      sha256: '01a5d04ca7e849fd2fade232d01ab33b2f93c8b2cd8c4bfaa2acc0f6d86f83f5',
      starts: 'We need to count the number of the lette',
      ends: 'nd 9. So yes, 3.\n\nThus, the answer is 3.',
    },
    toolCalls: [],
    finishReasons: [[0, 'stop']], // line 220
    finished: true,
    big: true,
  },
  {
    file: 'openai-compatible/deepseek-tool-call.chunks.txt',
    framing: 'chunks',
    events: 53, // 52 payload lines + [DONE]
    chunks: 52, // usage rides on the finish chunk (line 52)
    id: 'cca85624-4056-401f-b220-d77601d1f70d',
    created: 1764664568,
    // line 52: prompt 339 (cached_tokens 320 = prompt_cache_hit_tokens), completion 83 (reasoning 39), total 422
    usage: { input: 339, cachedInput: 320, output: 83, reasoning: 39 },
    clientUsage: { prompt_tokens: 339, completion_tokens: 83, total_tokens: 422 },
    content: '',
    reasoning:
      'The user is asking for the weather in San Francisco. I need to use the weather tool to get this information. ' +
      'Let me invoke the weather tool with the location parameter set to "San Francisco".',
    // index 0: id and name on the first tool-call line, arguments in fragments up to line 51
    toolCalls: [{ index: 0, id: 'call_00_ioIn7yN9p1ZOMNpDLwd4MgAF', name: 'weather', arguments: '{"location": "San Francisco"}' }],
    finishReasons: [[0, 'tool_calls']], // line 52
    finished: true,
    big: true,
  },
  {
    file: 'openai-compatible/groq-tool-call.chunks.txt',
    framing: 'chunks',
    events: 4, // 3 payload lines + [DONE]
    chunks: 3, // usage (and x_groq.usage) ride on the finish chunk (line 3)
    id: 'chatcmpl-b610d559-f156-4aca-8827-24b4fe6af54f',
    created: 1770770843,
    // line 3: usage {prompt_tokens 210, completion_tokens 15, total_tokens 225, queue_time …}; no details
    usage: { input: 210, cachedInput: 0, output: 15, reasoning: 0 },
    clientUsage: { prompt_tokens: 210, completion_tokens: 15, total_tokens: 225 },
    content: '',
    reasoning: '',
    toolCalls: [{ index: 0, id: 'tk85n1k4m', name: 'weather', arguments: '{}' }], // line 2, whole
    finishReasons: [[0, 'tool_calls']], // line 3
    finished: true,
    big: false,
  },
  {
    file: 'openai-compatible/mistral-tool-call.chunks.txt',
    framing: 'chunks',
    events: 3, // 2 payload lines + [DONE]
    chunks: 2, // usage rides on the finish chunk (line 2)
    id: 'b3999b8c93e04e11bcbff7bcab829667',
    created: 1769088854,
    // line 2: usage {prompt_tokens 124, total_tokens 146, completion_tokens 22}
    usage: { input: 124, cachedInput: 0, output: 22, reasoning: 0 },
    clientUsage: { prompt_tokens: 124, completion_tokens: 22, total_tokens: 146 },
    content: '',
    reasoning: '',
    // line 2: a whole tool call with neither `index` nor `type`
    toolCalls: [{ index: 0, id: 'gSIMJiOkT', name: 'weather', arguments: '{"location": "San Francisco"}' }],
    finishReasons: [[0, 'tool_calls']], // line 2
    finished: true,
    big: false,
  },
  {
    file: 'openai-compatible/xai-tool-call.chunks.txt',
    framing: 'chunks',
    events: 231, // 230 payload lines + [DONE]
    chunks: 229, // all but the final `choices: []` usage line
    id: '7027d986-3c59-a37a-9a5f-50713e01c8a6',
    created: 1770772296, // `created` moves from 1770772293 to 1770772296 during the stream: the last one wins
    // line 230: prompt 307 (cached 306), completion_tokens 26, reasoning_tokens 227, total_tokens 560.
    // xAI counts reasoning outside completion_tokens (26 + 227 = 253 = 560 − 307): output = total − prompt.
    usage: { input: 307, cachedInput: 306, output: 253, reasoning: 227 },
    clientUsage: { prompt_tokens: 307, completion_tokens: 253, total_tokens: 560 },
    content: '',
    reasoning: {
      length: 1069,
      sha256: '7df9a5068fc57ed4c3b8a1639dc6b569a75dfcf8859c7fd2320f84e9a4d6bc6f',
      starts: 'First, the user is asking about the weat',
      ends: ' for now, this is the logical next step.',
    },
    toolCalls: [{ index: 0, id: 'call_79382389', name: 'weather', arguments: '{"location":"San Francisco"}' }], // line 228, whole
    finishReasons: [[0, 'tool_calls']], // line 229; lines 1..228 carry no finish_reason key at all
    finished: true,
    big: true,
  },
  {
    file: 'openai-compatible/anthropic-fallback-tool-call.sse',
    framing: 'raw',
    events: 9, // 8 data events + [DONE]
    chunks: 8,
    id: 'msg_sanitized',
    created: 0, // every event says created 0: the gateway's final chunk falls back to its own clock
    usage: null, // the server never reports usage
    clientUsage: null,
    content: 'Reading it.', // events 2 and 3
    reasoning: '',
    // events 4..7: the only tool call arrives at upstream index 1 (no index 0); arguments "" + "" + "{\"pa" + "th\": \"a.txt\"}".
    // The adapter renumbers tool calls densely per choice, so the client sees index 0 (the openai SDK's
    // stream helper crashes on a hole at [0]; see the SDK test below).
    toolCalls: [{ index: 0, id: 'toolu_sanitized', name: 'read_file', arguments: '{"path": "a.txt"}' }],
    finishReasons: [[0, 'tool_calls']], // event 8
    finished: true,
    big: false,
  },
  {
    file: 'openai-raw/parallel-tool-calls-stream-include-usage.sse',
    framing: 'raw',
    events: 26, // 25 data events + [DONE]
    chunks: 24, // all but the `choices: []` usage event
    id: 'chatcmpl-9tXjpPLJgivc9nyuBCCWX8HNg9L2J',
    created: 1723024757,
    // usage event: {prompt_tokens 149, completion_tokens 60, total_tokens 209}
    usage: { input: 149, cachedInput: 0, output: 60, reasoning: 0 },
    clientUsage: { prompt_tokens: 149, completion_tokens: 60, total_tokens: 209 },
    content: '',
    reasoning: '',
    toolCalls: [
      { index: 0, id: 'call_lQnnsesjFMWMQ5IeWPHzR4th', name: 'GetWeatherArgs', arguments: '{"city": "Edinburgh", "country": "UK", "units": "c"}' },
      { index: 1, id: 'call_2xjOUgaCdiwAcl9ZBL9LyMUU', name: 'get_stock_price', arguments: '{"ticker": "AAPL", "exchange": "NASDAQ"}' },
    ],
    finishReasons: [[0, 'tool_calls']],
    finished: true,
    big: false,
  },
  {
    file: 'openai-raw/structured-output-stream-include-usage.sse',
    framing: 'raw',
    events: 14, // 13 data events + [DONE]
    chunks: 12, // all but the `choices: []` usage event
    id: 'chatcmpl-9rnyXoOvZN6Ec33DKStiqSdEB76Ba',
    created: 1722610517,
    // usage event: {prompt_tokens 71, completion_tokens 10, total_tokens 81}
    usage: { input: 71, cachedInput: 0, output: 10, reasoning: 0 },
    clientUsage: { prompt_tokens: 71, completion_tokens: 10, total_tokens: 81 },
    content: '{"city":"San Francisco","units":"f"}',
    reasoning: '',
    toolCalls: [],
    finishReasons: [[0, 'stop']],
    finished: true,
    big: false,
  },
];

// ---- reading what the client receives -------------------------------------------------------------

interface ToolCallDelta {
  index?: unknown;
  id?: unknown;
  type?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}

interface StreamChoice {
  index?: unknown;
  delta?: { content?: unknown; reasoning_content?: unknown; tool_calls?: ToolCallDelta[] };
  finish_reason?: unknown;
}

function choicesOf(chunk: JsonObject): StreamChoice[] {
  return Array.isArray(chunk.choices) ? (chunk.choices as StreamChoice[]) : [];
}

function joinDeltas(chunks: readonly JsonObject[], field: 'content' | 'reasoning_content'): string {
  let text = '';
  for (const chunk of chunks) {
    for (const choice of choicesOf(chunk)) {
      const value = choice.delta?.[field];
      if (typeof value === 'string') text += value;
    }
  }
  return text;
}

interface AssembledToolCall {
  index: number;
  id: string;
  type: string;
  name: string;
  arguments: string;
}

/** Tool calls as an OpenAI client builds them: one slot per `index`; id/type/name set, arguments appended. */
function assembleToolCalls(chunks: readonly JsonObject[]): { calls: AssembledToolCall[]; deltas: number; withoutIndex: number } {
  const byIndex = new Map<number, AssembledToolCall>();
  let deltas = 0;
  let withoutIndex = 0;
  for (const chunk of chunks) {
    for (const choice of choicesOf(chunk)) {
      for (const delta of choice.delta?.tool_calls ?? []) {
        deltas++;
        if (typeof delta.index !== 'number') {
          withoutIndex++;
          continue;
        }
        let call = byIndex.get(delta.index);
        if (!call) {
          call = { index: delta.index, id: '', type: '', name: '', arguments: '' };
          byIndex.set(delta.index, call);
        }
        if (typeof delta.id === 'string' && delta.id !== '') call.id = delta.id;
        if (typeof delta.type === 'string') call.type = delta.type;
        if (typeof delta.function?.name === 'string' && delta.function.name !== '') call.name = delta.function.name;
        if (typeof delta.function?.arguments === 'string') call.arguments += delta.function.arguments;
      }
    }
  }
  return { calls: [...byIndex.values()].sort((a, b) => a.index - b.index), deltas, withoutIndex };
}

function finishReasonsOf(chunks: readonly JsonObject[]): [number, string][] {
  const reasons: [number, string][] = [];
  for (const chunk of chunks) {
    for (const choice of choicesOf(chunk)) {
      if (typeof choice.finish_reason === 'string') reasons.push([Number(choice.index), choice.finish_reason]);
    }
  }
  return reasons;
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function assertText(actual: string, expected: TextExpectation, what: string): void {
  if (typeof expected === 'string') {
    assert.equal(actual, expected, what);
    return;
  }
  assert.equal(actual.length, expected.length, `${what}: length`);
  assert.ok(actual.startsWith(expected.starts), `${what}: starts with ${JSON.stringify(expected.starts)}`);
  assert.ok(actual.endsWith(expected.ends), `${what}: ends with ${JSON.stringify(expected.ends)}`);
  assert.equal(sha256(actual), expected.sha256, `${what}: sha256`);
}

// ---- reading the recording directly (the oracle: what the upstream sent, without the adapter) ------

function fixtureUrl(file: string): URL {
  return new URL(file, UPSTREAM);
}

function streamBytes(c: StreamCase): Buffer {
  return c.framing === 'chunks' ? framesFromChunksFile(fixtureUrl(c.file)) : readFileSync(fixtureUrl(c.file));
}

/** The recorded payloads, read naively (one JSON value per line / per `data:` line), [DONE] left out. */
function recordedPayloads(c: StreamCase): JsonObject[] {
  const text = readFileSync(fixtureUrl(c.file), 'utf8');
  const lines =
    c.framing === 'chunks'
      ? text.split('\n').filter((line) => line.trim() !== '')
      : text
          .split('\n')
          .filter((line) => line.startsWith('data: '))
          .map((line) => line.slice('data: '.length));
  return lines.filter((line) => line !== '[DONE]').map((line) => JSON.parse(line) as JsonObject);
}

function summary(r: Replay): unknown {
  return { chunks: r.chunks, usage: r.usage, finished: r.finished, id: r.id, created: r.created, events: r.events };
}

/** What a client receives after the relayed chunks: the gateway's own usage chunk (as chat-stream.ts builds it) and [DONE]. */
function clientSse(r: Replay): { text: string; finalChunk: JsonObject } {
  const finalChunk: JsonObject = {
    id: r.id || 'chatcmpl-replay',
    object: 'chat.completion.chunk',
    created: r.created || 1_700_000_000,
    model: CLIENT_MODEL,
    choices: [],
    usage: { ...(r.usage?.openai ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }), cost: 0.000123 },
  };
  return { text: r.wire + encodeSseData(finalChunk) + SSE_DONE, finalChunk };
}

/** The official OpenAI SDK, reading the gateway's bytes through an in-memory fetch (no network). */
function sdkClient(body: string): OpenAI {
  return new OpenAI({
    apiKey: 'tg-contract-test',
    baseURL: 'http://gateway.invalid/v1',
    maxRetries: 0,
    fetch: () => Promise.resolve(new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } })),
  });
}

// Split coverage budget (measured on a 2-core machine: one full replay of the 100 KB openai-text file takes
// ~1 ms, so all ~100k two-push splits of it alone would take ~100 s, and even every 7th boundary plus the
// first and last 2 KB ~18 s). For recordings under BIG_BYTES every boundary is replayed over the whole
// file. For the big ones (openai-text, deepseek-reasoning, deepseek-tool-call, xai-tool-call):
//  (1) every boundary is split inside an event window — the event that holds the boundary plus the next
//      one, replayed from a fresh decoder and translator. An SSE event boundary is a clean decoder state
//      (no partial line, no partial UTF-8 character, no pending data), so the decoder meets the split with
//      exactly the state it has in the whole-file replay; the window's output is compared split vs whole;
//  (2) whole-file replays split at every boundary in the first and last EDGE_BYTES, at every boundary
//      inside a multi-byte UTF-8 character, and at every SPARSE_STRIDE-th boundary in between, compared
//      as a digest (client SSE text + usage + end marker + id + created + event count).
// Measured: the whole file takes ~7 s of CPU here (6 s wall idle, 13 s wall at load average 6 on 2 cores).
const BIG_BYTES = 10_000;
const EDGE_BYTES = 512;
const SPARSE_STRIDE = 211;

function firstMismatch(bytes: Buffer, offsets: Iterable<number>, expected: string): number | undefined {
  for (const offset of offsets) {
    if (replayDigest(bytes, [offset]) !== expected) return offset;
  }
  return undefined;
}

function sampledOffsets(bytes: Buffer): number[] {
  const offsets = new Set<number>(offsetsInsideUtf8Characters(bytes));
  for (let k = 1; k < bytes.length; k++) {
    if (k <= EDGE_BYTES || k >= bytes.length - EDGE_BYTES || k % SPARSE_STRIDE === 0) offsets.add(k);
  }
  return [...offsets].sort((a, b) => a - b);
}

// ---- the stream contract, per recording ---------------------------------------------------------------

for (const c of STREAM_CASES) {
  void describe(`replaying ${c.file} through the OpenAI-family stream path`, () => {
    const bytes = streamBytes(c);
    const whole = replayStream(bytes);

    void test('decodes every recorded event and relays exactly the chunks that carry choices', () => {
      assert.equal(whole.events, c.events);
      assert.equal(whole.chunks.length, c.chunks);
      assert.equal(whole.chunks.length, recordedPayloads(c).filter((p) => Array.isArray(p.choices) && p.choices.length > 0).length);
    });

    void test('reports the recorded usage as canonical tokens, normalised for the client', () => {
      assert.deepEqual(countsOf(whole.usage?.tokens) ?? null, c.usage);
      if (c.clientUsage === null) {
        assert.equal(whole.usage, null);
        return;
      }
      const { prompt_tokens, completion_tokens, total_tokens } = whole.usage?.openai ?? {};
      assert.deepEqual({ prompt_tokens, completion_tokens, total_tokens }, c.clientUsage);
    });

    void test('keeps the upstream id and created for the final usage chunk', () => {
      assert.equal(whole.id, c.id);
      assert.equal(whole.created, c.created);
    });

    void test('relays content and reasoning_content text exactly as recorded', () => {
      const content = joinDeltas(whole.chunks, 'content');
      const reasoning = joinDeltas(whole.chunks, 'reasoning_content');
      const recorded = recordedPayloads(c);
      assert.equal(content, joinDeltas(recorded, 'content'), 'content equals the recording');
      assert.equal(reasoning, joinDeltas(recorded, 'reasoning_content'), 'reasoning equals the recording');
      assertText(content, c.content, 'content');
      assertText(reasoning, c.reasoning, 'reasoning_content');
    });

    void test('gives every tool-call delta a numeric index and assembles each call like an OpenAI client', () => {
      const { calls, deltas, withoutIndex } = assembleToolCalls(whole.chunks);
      assert.equal(withoutIndex, 0, `${withoutIndex} of ${deltas} tool-call deltas have no numeric index`);
      assert.deepEqual(
        calls,
        c.toolCalls.map((call) => ({ ...call, type: 'function' })),
      );
      for (const call of calls) assert.doesNotThrow(() => JSON.parse(call.arguments) as unknown, `arguments of call ${call.index} are JSON`);
    });

    void test('relays the finish_reason of each choice once', () => {
      assert.deepEqual(finishReasonsOf(whole.chunks), c.finishReasons);
    });

    void test('emits only chunks that match CreateChatCompletionStreamResponse', () => {
      const violations = whole.chunks.flatMap((chunk, i) => validateAgainst('CreateChatCompletionStreamResponse', chunk).map((v) => `chunk ${i}: ${v}`));
      assert.equal(violations.length, 0, `${violations.length} schema violations, e.g.\n  ${violations.slice(0, 5).join('\n  ')}`);
    });

    void test('emits no usage, no prelude and no null system_fingerprint, and names the client model', () => {
      whole.chunks.forEach((chunk, i) => {
        assert.ok(chunk.usage === undefined || chunk.usage === null, `chunk ${i} carries usage`);
        assert.equal(chunk.model, CLIENT_MODEL, `chunk ${i} model`);
        assert.equal(chunk.object, 'chat.completion.chunk', `chunk ${i} object`);
        assert.notEqual(chunk.system_fingerprint, null, `chunk ${i} system_fingerprint`);
        assert.ok(choicesOf(chunk).length > 0, `chunk ${i} has no choices`);
        assert.ok(typeof chunk.id === 'string' && chunk.id !== '', `chunk ${i} id`);
      });
    });

    void test(`marks the stream finished ${c.finished ? 'on' : 'without'} [DONE]`, () => {
      assert.equal(whole.finished, c.finished);
    });

    void test('lets the output meter see output and a finish, with a positive token count', () => {
      assert.equal(whole.meter.sawOutput, true);
      assert.equal(whole.meter.sawFinish, true);
      assert.ok(whole.meter.tokens() > 0, `meter counted ${whole.meter.tokens()} tokens`);
    });

    void test('gives the same output fed one byte per push as fed whole', () => {
      assert.deepEqual(summary(replayStream(bytes, everyOffset(bytes.length))), summary(whole));
    });

    if (!c.big) {
      void test('gives the same output split into two pushes at every byte boundary', () => {
        assert.ok(bytes.length < BIG_BYTES);
        const expected = replayDigest(bytes);
        const bad = firstMismatch(bytes, everyOffset(bytes.length), expected);
        assert.equal(bad, undefined, `split at byte ${bad} changed the output`);
      });
    } else {
      void test('gives the same output split into two pushes at every byte boundary of every event window', () => {
        assert.ok(bytes.length >= BIG_BYTES);
        const ends = frameEnds(bytes);
        assert.equal(ends.length, c.events, 'one window per event');
        let start = 0;
        let windows = 0;
        for (let i = 0; i < ends.length; i++) {
          const end = ends[i] ?? bytes.length;
          const window = bytes.subarray(start, ends[i + 1] ?? end);
          const expected = replayDigest(window);
          // Every boundary in (start, end]: inside event i and the one between it and event i + 1.
          const offsets = everyOffset(window.length).filter((k) => k <= end - start);
          const bad = firstMismatch(window, offsets, expected);
          assert.equal(bad, undefined, `split at byte ${start + (bad ?? 0)} (event ${i}) changed the output`);
          start = end;
          windows++;
        }
        assert.equal(windows, c.events);
      });

      void test(`gives the same whole-file output split into two pushes at the edges, inside UTF-8 characters and every ${SPARSE_STRIDE}th byte`, () => {
        const expected = replayDigest(bytes);
        const offsets = sampledOffsets(bytes);
        assert.ok(offsets.length > 2 * EDGE_BYTES);
        const bad = firstMismatch(bytes, offsets, expected);
        assert.equal(bad, undefined, `split at byte ${bad} changed the output`);
      });
    }

    void test('lets the official OpenAI SDK assemble the same message from the bytes the client receives', async () => {
      const { text, finalChunk } = clientSse(whole);
      assert.deepEqual(validateAgainst('CreateChatCompletionStreamResponse', finalChunk), [], 'the final usage chunk');
      const stream = sdkClient(text).chat.completions.stream({ model: CLIENT_MODEL, messages: [{ role: 'user', content: 'replay' }] });
      let completion: Awaited<ReturnType<typeof stream.finalChatCompletion>>;
      try {
        completion = await stream.finalChatCompletion();
      } catch (error) {
        const cause = error instanceof Error && error.cause instanceof Error ? `\n  cause: ${error.cause.stack?.split('\n').slice(0, 3).join('\n  ')}` : '';
        assert.fail(`the openai SDK could not read the stream the gateway sends: ${String(error)}${cause}`);
      }
      assert.equal(completion.model, CLIENT_MODEL);
      assert.equal(completion.choices.length, 1);
      const choice = completion.choices[0];
      assert.ok(choice);
      assert.equal(choice.finish_reason, c.finishReasons[0]?.[1]);
      assert.equal(choice.message.content ?? '', joinDeltas(whole.chunks, 'content'));
      // The SDK keeps tool calls in an array indexed by the relayed `index`: it must come out dense.
      const sdkCalls = (choice.message.tool_calls ?? []).map((call) => ({
        id: call.id,
        name: call.type === 'function' ? call.function.name : '',
        arguments: call.type === 'function' ? call.function.arguments : '',
      }));
      assert.deepEqual(
        sdkCalls,
        c.toolCalls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })),
      );
      if (c.clientUsage) {
        const { prompt_tokens, completion_tokens, total_tokens } = completion.usage ?? {};
        assert.deepEqual({ prompt_tokens, completion_tokens, total_tokens }, c.clientUsage);
      }
    });
  });
}

// ---- multi-byte characters and missing end markers -------------------------------------------------

void describe('replaying openai/openai-text.chunks.txt with hostile framing', () => {
  const file = fixtureUrl('openai/openai-text.chunks.txt');

  void test('a split inside each multi-byte character never yields a replacement character', () => {
    const bytes = framesFromChunksFile(file);
    const inside = offsetsInsideUtf8Characters(bytes);
    // two '—' and one '’', 3 bytes each: 2 interior offsets apiece
    assert.equal(inside.length, 6);
    const expected = joinDeltas(replayStream(bytes).chunks, 'content');
    assert.ok(expected.includes('—') && expected.includes('’'));
    for (const offset of inside) {
      const content = joinDeltas(replayStream(bytes, [offset]).chunks, 'content');
      assert.ok(!content.includes('\uFFFD'), `split at ${offset} produced U+FFFD`);
      assert.equal(content, expected, `split at ${offset}`);
    }
  });

  void test('a recording that stops without [DONE] keeps its usage but is not marked finished', () => {
    const r = replayStream(framesFromChunksFile(file, { done: false }));
    assert.equal(r.finished, false);
    assert.deepEqual(countsOf(r.usage?.tokens), { input: 16, cachedInput: 0, output: 300, reasoning: 0 });
    assert.equal(r.chunks.length, 302);
  });
});

// ---- non-stream bodies ---------------------------------------------------------------------------------

function readJson(file: string): unknown {
  return JSON.parse(readFileSync(fixtureUrl(file), 'utf8')) as unknown;
}

interface CompletionChoice {
  finish_reason?: unknown;
  message?: { content?: unknown; reasoning_content?: unknown; tool_calls?: { id?: unknown; type?: unknown; function?: { name?: unknown; arguments?: unknown } }[] };
}

function completionChoices(body: JsonObject): CompletionChoice[] {
  return Array.isArray(body.choices) ? (body.choices as CompletionChoice[]) : [];
}

/** The body as chat.ts sends it: the adapter's body with `usage` replaced by the settled one (with cost). */
function asSentToClient(body: JsonObject, usage: JsonObject | undefined): JsonObject {
  return { ...body, usage: { ...usage, cost: 0.000123 } };
}

void describe('parsing OpenAI-family non-stream bodies', () => {
  void test('openai/openai-text.json keeps its message and reports 16 input and 363 output tokens', () => {
    const raw = readJson('openai/openai-text.json') as JsonObject;
    const recordedContent = completionChoices(raw)[0]?.message?.content;
    const parsed = parseOpenAIChatResponse(raw, TARGET);
    // usage: prompt_tokens 16, completion_tokens 363, total 379, cached 0, reasoning 0
    assert.deepEqual(countsOf(parsed.usage?.tokens), { input: 16, cachedInput: 0, output: 363, reasoning: 0 });
    assert.equal(parsed.usage?.openai.completion_tokens, 363);
    assert.equal(parsed.usage?.openai.total_tokens, 379);
    assert.equal(parsed.body.model, CLIENT_MODEL);
    const choice = completionChoices(parsed.body)[0];
    assert.equal(choice?.finish_reason, 'stop');
    assert.equal(choice?.message?.content, recordedContent);
    assert.equal(typeof recordedContent === 'string' && recordedContent.startsWith('**Holiday Name:** Galaxy Day'), true);
    assert.deepEqual(validateAgainst('CreateChatCompletionResponse', asSentToClient(parsed.body, parsed.usage?.openai)), []);
  });

  void test('openai-compatible/xai-tool-call.json counts reasoning outside completion_tokens as output (588 − 307 = 281)', () => {
    const parsed = parseOpenAIChatResponse(readJson('openai-compatible/xai-tool-call.json'), TARGET);
    // usage: prompt 307 (cached 244), completion_tokens 26, reasoning_tokens 255, total_tokens 588; 26 + 255 = 281
    assert.deepEqual(countsOf(parsed.usage?.tokens), { input: 307, cachedInput: 244, output: 281, reasoning: 255 });
    assert.equal(parsed.usage?.openai.prompt_tokens, 307);
    assert.equal(parsed.usage?.openai.completion_tokens, 281);
    assert.equal(parsed.usage?.openai.total_tokens, 588);
    assert.equal(parsed.body.model, CLIENT_MODEL);
    assert.equal(parsed.body.system_fingerprint, 'fp_2a885414fb');
    const choice = completionChoices(parsed.body)[0];
    assert.equal(choice?.finish_reason, 'tool_calls');
    const reasoning = choice?.message?.reasoning_content;
    assert.equal(typeof reasoning === 'string' && reasoning.startsWith('First, the user is asking about the weather in San Francisco.'), true);
    assert.deepEqual(choice?.message?.tool_calls, [
      { id: 'call_46427107', function: { name: 'weather', arguments: '{"location":"San Francisco"}' }, type: 'function' },
    ]);
  });

  void test('openai-compatible/xai-tool-call.json is sent to the client as a valid CreateChatCompletionResponse', () => {
    const parsed = parseOpenAIChatResponse(readJson('openai-compatible/xai-tool-call.json'), TARGET);
    assert.deepEqual(validateAgainst('CreateChatCompletionResponse', asSentToClient(parsed.body, parsed.usage?.openai)), []);
  });

  void test('openai/openai-embedding.json reports 12 input tokens and keeps float vectors as sent', () => {
    const raw = readJson('openai/openai-embedding.json') as JsonObject;
    const recorded = structuredClone(raw.data);
    const parsed = parseOpenAIEmbeddingResponse(raw, { model: CLIENT_MODEL, input: ['a', 'b'] }, TARGET);
    // usage: prompt_tokens 12, total_tokens 12
    assert.deepEqual(countsOf(parsed.usage?.tokens), { input: 12, cachedInput: 0, output: 0, reasoning: 0 });
    assert.deepEqual(parsed.usage?.openai, { prompt_tokens: 12, total_tokens: 12 });
    assert.equal(parsed.body.model, CLIENT_MODEL);
    assert.deepEqual(parsed.body.data, recorded);
    assert.deepEqual(validateAgainst('CreateEmbeddingResponse', asSentToClient(parsed.body, parsed.usage?.openai)), []);
  });

  void test('openai/openai-embedding.json is re-encoded as base64 float32 when the client asked for base64', () => {
    const raw = readJson('openai/openai-embedding.json') as JsonObject;
    const recorded = (raw.data as { embedding: number[] }[]).map((item) => item.embedding);
    const parsed = parseOpenAIEmbeddingResponse(raw, { model: CLIENT_MODEL, input: ['a', 'b'], encoding_format: 'base64' }, TARGET);
    const data = parsed.body.data as { index: number; embedding: unknown }[];
    assert.equal(data.length, 2);
    data.forEach((item, i) => {
      assert.equal(typeof item.embedding, 'string');
      const buffer = Buffer.from(item.embedding as string, 'base64');
      const floats = Array.from(new Float32Array(buffer.buffer, buffer.byteOffset, buffer.byteLength / 4));
      assert.deepEqual(floats, (recorded[i] ?? []).map((x) => Math.fround(x)));
    });
  });

  void test('openai/reasoning-model-legacy-parameter-error.json becomes a 400 failure with message, type, param and code', () => {
    const text = readFileSync(fixtureUrl('openai/reasoning-model-legacy-parameter-error.json'), 'utf8');
    assert.deepEqual(parseOpenAIError(400, text, {}), {
      status: 400,
      message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      type: 'invalid_request_error',
      code: 'unsupported_parameter',
      param: 'max_tokens',
      retryAfter: undefined,
    });
  });
});

// ---- the azure-openai adapter's own translator ----------------------------------------------------------
// The cases above replay Azure's recording through the plain OpenAI translator; the gateway runs a provider
// of kind azure-openai through azureOpenAIAdapter.createChatStreamTranslator, which also drops Azure's
// content_filter_results. Same bytes, same checks, whole and split at every byte boundary.

void describe('replaying openai/azure-model-router.1.chunks.txt through the azure-openai adapter’s stream translator', () => {
  const bytes = framesFromChunksFile(fixtureUrl('openai/azure-model-router.1.chunks.txt'));
  const azureTarget: UpstreamTarget = testTarget({
    provider: testProvider({
      id: 'azure',
      kind: 'azure-openai',
      baseUrl: 'https://contoso.openai.azure.com',
      origin: 'https://contoso.openai.azure.com',
      basePath: '',
      apiKey: 'azure-test-key',
      apiVersion: '2024-10-21',
    }),
    upstreamModel: 'model-router',
    clientModel: CLIENT_MODEL,
  });
  const azure: TranslatorFactory = (target) => azureOpenAIAdapter.createChatStreamTranslator(target);
  const replay = (splitAt: readonly number[] = []) => replayStream(bytes, splitAt, azureTarget, azure);
  const violations = (r: Replay) => r.chunks.flatMap((chunk, i) => validateAgainst('CreateChatCompletionStreamResponse', chunk).map((v) => `chunk ${i}: ${v}`));
  const whole = replay();

  void test('relays the six choice chunks with 0 schema violations, the recorded text, usage, id and created', () => {
    assert.equal(whole.events, 9); // 8 payload lines + [DONE]
    assert.equal(whole.chunks.length, 6); // the prelude (line 1) and the usage chunk (line 8) are not relayed
    assert.deepEqual(violations(whole), []);
    assert.equal(joinDeltas(whole.chunks, 'content'), 'Capital of Denmark.');
    assert.deepEqual(countsOf(whole.usage?.tokens), { input: 15, cachedInput: 0, output: 78, reasoning: 64 }); // line 8
    assert.equal(whole.id, 'chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt');
    assert.equal(whole.created, 1762317021);
    assert.equal(whole.finished, true);
    assert.deepEqual(finishReasonsOf(whole.chunks), [[0, 'stop']]);
  });

  void test('sends the client no prelude, no prompt_filter_results and no content_filter_results', () => {
    for (const chunk of whole.chunks) {
      assert.equal(chunk.prompt_filter_results, undefined);
      assert.ok(choicesOf(chunk).length > 0);
      for (const choice of chunk.choices as JsonObject[]) assert.equal(choice.content_filter_results, undefined);
    }
  });

  void test('differs from the plain OpenAI translator’s output only by the dropped content_filter_results', () => {
    const plain = replayStream(bytes).chunks.map((chunk) => ({
      ...chunk,
      choices: (chunk.choices as JsonObject[]).map(({ content_filter_results: _dropped, ...choice }) => choice),
    }));
    assert.deepEqual(whole.chunks, plain);
  });

  void test('gives the same output, with 0 schema violations, split into two pushes at every byte boundary', () => {
    const expected = replayDigest(bytes, [], azureTarget, azure);
    for (const offset of everyOffset(bytes.length)) {
      assert.equal(replayDigest(bytes, [offset], azureTarget, azure), expected, `split at byte ${offset} changed the output`);
      const split = replay([offset]);
      assert.deepEqual(violations(split), [], `split at byte ${offset}`);
    }
  });

  void test('gives the same output fed one byte per push', () => {
    const byteWise = replay(everyOffset(bytes.length));
    assert.deepEqual(byteWise.chunks, whole.chunks);
    assert.deepEqual(byteWise.usage, whole.usage);
    assert.equal(byteWise.finished, true);
  });
});
