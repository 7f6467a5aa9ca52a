// Proves the Anthropic and Gemini mocks speak their providers' wire formats (the shapes of the recordings in
// test/fixtures/upstream), check credentials, refuse what the real APIs refuse, and report deterministic
// usage, so the provider e2e tests can rely on them; and that the Anthropic and Responses mocks answer in
// text on request (answerInText), which lets a coding agent's turn end.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, beforeEach, describe, test } from 'node:test';
import {
  ANTHROPIC_MOCK_KEY,
  ANTHROPIC_TEXT,
  ANTHROPIC_THINKING,
  anthropicError,
  anthropicUsageFor,
  signatureFor,
  startMockAnthropic,
  type MockAnthropic,
} from '../support/mock-anthropic.js';
import { GEMINI_MOCK_KEY, GEMINI_TEXT, GEMINI_THOUGHT, geminiUsageFor, googleRateLimited, startMockGemini, thoughtSignatureFor, type MockGemini } from '../support/mock-gemini.js';
import { defaultEmbeddingFor, inSequence, toolResultText } from '../support/mock-upstream.js';
import { RESPONSES_MOCK_KEY, RESPONSES_TEXT, startMockResponses } from '../support/mock-responses.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are arbitrary JSON
type Json = any;

const FIXTURES = new URL('../fixtures/upstream/', import.meta.url);
const fixture = (file: string): Json => JSON.parse(readFileSync(new URL(file, FIXTURES), 'utf8'));
const TOOL = { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { location: { type: 'string' } } } };
const user = (content: unknown) => ({ role: 'user', content });

let anthropic: MockAnthropic;
let gemini: MockGemini;
before(async () => {
  [anthropic, gemini] = await Promise.all([startMockAnthropic(), startMockGemini()]);
});
after(() => Promise.all([anthropic.close(), gemini.close()]));
beforeEach(() => {
  anthropic.reset();
  gemini.reset();
});

const signal = () => AbortSignal.timeout(2000);

// ---------------------------------------------------------------- Anthropic

const anthropicHeaders = (extra: Record<string, string> = {}) => ({
  'content-type': 'application/json',
  'x-api-key': ANTHROPIC_MOCK_KEY,
  'anthropic-version': '2023-06-01',
  ...extra,
});

async function messages(body: Record<string, unknown>, headers = anthropicHeaders()): Promise<{ status: number; text: string; json: Json }> {
  const res = await fetch(`${anthropic.url}/v1/messages`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 2000, ...body }),
    signal: signal(),
  });
  const text = await res.text();
  let json: Json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

/** Anthropic SSE: every event is `event: <type>\ndata: <json>` with data.type === type; no [DONE]. */
function anthropicEvents(text: string): Json[] {
  assert.ok(text.endsWith('\n\n'));
  assert.doesNotMatch(text, /\[DONE\]/);
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((frame) => {
      const match = /^event: (\w+)\ndata: (.+)$/.exec(frame);
      assert.ok(match, `framed as event + data: ${JSON.stringify(frame)}`);
      const data = JSON.parse(match[2]!);
      assert.equal(data.type, match[1], 'the event name is the data type');
      return data;
    });
}

describe('the Anthropic mock', () => {
  test('answers a Message shaped like the recorded ones, with usage 20 + messages in and 9 out', async () => {
    const body = { messages: [user('Hi'), { role: 'assistant', content: 'Hello' }, user('Again')] };
    const { status, json } = await messages(body);
    assert.equal(status, 200);
    const recorded = fixture('anthropic/anthropic-text.json');
    assert.deepEqual(Object.keys(json).sort(), Object.keys(recorded).sort());
    assert.deepEqual(json.content, [{ type: 'text', text: ANTHROPIC_TEXT }]);
    assert.equal(json.stop_reason, 'end_turn');
    assert.deepEqual(anthropicUsageFor(body), { input_tokens: 23, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 9 });
    assert.deepEqual(json.usage, { ...anthropicUsageFor(body), service_tier: 'standard' });
    anthropic.cache = { read: 7, creation: 3 };
    assert.deepEqual((await messages(body)).json.usage, { input_tokens: 23, cache_creation_input_tokens: 3, cache_read_input_tokens: 7, output_tokens: 9, service_tier: 'standard' });
  });

  test('refuses a wrong x-api-key or anthropic-version with 401 in Anthropic’s error shape', async () => {
    for (const headers of [anthropicHeaders({ 'x-api-key': 'wrong' }), anthropicHeaders({ 'anthropic-version': '2020-01-01' })]) {
      const { status, json } = await messages({ messages: [user('Hi')] }, headers);
      assert.equal(status, 401);
      assert.equal(json.type, 'error');
      assert.equal(json.error.type, 'authentication_error');
      assert.equal(typeof json.error.message, 'string');
    }
    anthropic.apiKey = 'rotated';
    assert.equal((await messages({ messages: [user('Hi')] })).status, 401, 'the accepted key can be changed');
  });

  test('streams in Anthropic’s framing: message_start, blocks with a ping, cumulative usage on message_delta, message_stop', async () => {
    const body = { messages: [user('Hi')], stream: true };
    const { status, text } = await messages(body);
    assert.equal(status, 200);
    const events = anthropicEvents(text);
    assert.deepEqual(
      events.map((e) => e.type + (e.delta?.type ? `:${e.delta.type}` : '')),
      ['message_start', 'content_block_start', 'ping', ...Array(ANTHROPIC_TEXT.split(' ').length).fill('content_block_delta:text_delta'), 'content_block_stop', 'message_delta', 'message_stop'],
    );
    assert.equal(events[0].message.usage.output_tokens, 1, 'message_start carries a placeholder output count');
    assert.deepEqual(events.at(-2).usage, anthropicUsageFor(body), 'message_delta restates the final usage');
    assert.equal(events.filter((e) => e.delta?.type === 'text_delta').map((e) => e.delta.text).join(''), ANTHROPIC_TEXT);
  });

  test('thinks first when thinking is enabled: a signed thinking block, 30 more output tokens, thinking_delta and signature_delta', async () => {
    const body = { messages: [user('Hi')], thinking: { type: 'enabled', budget_tokens: 1024 } };
    const { json } = await messages(body);
    assert.deepEqual(json.content[0], { type: 'thinking', thinking: ANTHROPIC_THINKING, signature: signatureFor(ANTHROPIC_THINKING) });
    assert.equal(json.usage.output_tokens, 39);
    const events = anthropicEvents((await messages({ ...body, stream: true })).text);
    assert.deepEqual(events[1].content_block, { type: 'thinking', thinking: '', signature: '' });
    assert.equal(events[2].type, 'ping');
    assert.equal(events.filter((e) => e.delta?.type === 'thinking_delta').map((e) => e.delta.thinking).join(''), ANTHROPIC_THINKING);
    assert.deepEqual(events.filter((e) => e.delta?.type === 'signature_delta').map((e) => e.delta.signature), [signatureFor(ANTHROPIC_THINKING)]);
  });

  test('calls the first tool after a line of text, or the forced one alone, with input_json_delta fragments in streams', async () => {
    const auto = (await messages({ messages: [user('Weather?')], tools: [TOOL] })).json;
    assert.equal(auto.stop_reason, 'tool_use');
    assert.deepEqual(auto.content.map((b: Json) => b.type), ['text', 'tool_use']);
    assert.deepEqual(auto.content[1].input, { location: 'Paris' });
    assert.match(auto.content[1].id, /^toolu_/);
    const forced = (await messages({ messages: [user('JSON')], tools: [TOOL, { name: 'json_response', input_schema: { type: 'object' } }], tool_choice: { type: 'tool', name: 'json_response' } })).json;
    assert.deepEqual(forced.content.map((b: Json) => [b.type, b.name, b.input]), [['tool_use', 'json_response', { answer: 42 }]]);
    const events = anthropicEvents((await messages({ messages: [user('Weather?')], tools: [TOOL], tool_choice: { type: 'any' }, stream: true })).text);
    const fragments = events.filter((e) => e.delta?.type === 'input_json_delta').map((e) => e.delta.partial_json);
    assert.equal(fragments[0], '', 'the first fragment is empty, as recorded');
    assert.ok(fragments.length > 2);
    assert.deepEqual(JSON.parse(fragments.join('')), { location: 'Paris' });
    assert.equal(events.at(-2).delta.stop_reason, 'tool_use');
  });

  test('with answerInText, answers in text though tools are offered (a forced tool is still called), until reset()', async () => {
    anthropic.answerInText = true;
    const ask = { messages: [user('Weather?')], tools: [TOOL] };
    const whole = (await messages(ask)).json;
    assert.deepEqual([whole.stop_reason, whole.content], ['end_turn', [{ type: 'text', text: ANTHROPIC_TEXT }]]);
    const events = anthropicEvents((await messages({ ...ask, stream: true })).text);
    assert.deepEqual(events.filter((e) => e.type === 'content_block_start').map((e) => e.content_block.type), ['text']);
    assert.equal(events.at(-2).delta.stop_reason, 'end_turn');
    const forced = (await messages({ ...ask, tool_choice: { type: 'any' } })).json;
    assert.equal(forced.stop_reason, 'tool_use');
    anthropic.reset();
    assert.equal((await messages(ask)).json.stop_reason, 'tool_use');
  });

  test('answers a tool result in text, and refuses a tool_result whose tool_use_id the previous turn did not issue', async () => {
    const call = { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } };
    const history = [user('Weather?'), { role: 'assistant', content: [call] }];
    const ok = await messages({ tools: [TOOL], messages: [...history, user([{ type: 'tool_result', tool_use_id: 'toolu_1', content: '21C' }])] });
    assert.deepEqual(ok.json.content, [{ type: 'text', text: toolResultText('21C') }]);
    const bad = await messages({ tools: [TOOL], messages: [...history, user([{ type: 'tool_result', tool_use_id: 'toolu_2', content: '21C' }])] });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.type, 'invalid_request_error');
    assert.match(bad.json.error.message, /unexpected `tool_use_id`/);
  });

  test('refuses what the real API refuses with thinking on: a forced tool, a wrong signature, a tool turn without its thinking', async () => {
    const thinking = { type: 'enabled', budget_tokens: 1024 };
    const call = { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} };
    const result = user([{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }]);
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ messages: [user('Hi')], tools: [TOOL], tool_choice: { type: 'any' } }, /forces tool use/],
      [{ messages: [user('Hi')], max_tokens: 1024 }, /must be greater than `thinking.budget_tokens`/],
      [{ messages: [user('Hi'), { role: 'assistant', content: [call] }, result], tools: [TOOL] }, /must start with a thinking block/],
      [{ messages: [user('Hi'), { role: 'assistant', content: [{ type: 'thinking', thinking: 'x', signature: 'forged' }, call] }, result], tools: [TOOL] }, /Invalid `signature`/],
    ];
    for (const [body, message] of cases) {
      const { status, json } = await messages({ thinking, ...body });
      assert.equal(status, 400, JSON.stringify(body));
      assert.match(json.error.message, message);
    }
    const signed = { type: 'thinking', thinking: 'x', signature: signatureFor('x') };
    assert.equal((await messages({ thinking, tools: [TOOL], messages: [user('Hi'), { role: 'assistant', content: [signed, call] }, result] })).status, 200);
  });

  test('fault combinators fall back to the Anthropic default, and error replies keep Anthropic’s shape', async () => {
    anthropic.handle(inSequence(anthropicError(529, 'overloaded_error', 'Overloaded')));
    const first = await messages({ messages: [user('Hi')] });
    assert.equal(first.status, 529);
    assert.deepEqual(Object.keys(first.json).sort(), ['error', 'request_id', 'type']);
    assert.deepEqual(first.json.error, { type: 'overloaded_error', message: 'Overloaded' });
    const second = await messages({ messages: [user('Hi')] });
    assert.equal(second.status, 200);
    assert.deepEqual(second.json.content, [{ type: 'text', text: ANTHROPIC_TEXT }]);
    assert.equal(anthropic.requests.length, 2);
  });
});

// ---------------------------------------------------------------- Gemini

async function google(method: string, body: unknown, opts: { model?: string; key?: string | null; query?: string } = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.key !== null) headers['x-goog-api-key'] = opts.key ?? GEMINI_MOCK_KEY;
  const res = await fetch(`${gemini.url}/v1beta/models/${opts.model ?? 'gemini-2.5-flash'}:${method}${opts.query ?? ''}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
    signal: signal(),
  });
  const text = await res.text();
  let json: Json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

const ask = (text: string) => ({ role: 'user', parts: [{ text }] });
const weatherTool = { functionDeclarations: [{ name: 'get_weather', parameters: { type: 'OBJECT', properties: { location: { type: 'STRING' } } } }, { name: 'get_time' }] };

describe('the Responses mock', () => {
  test('with answerInText, answers with a message though function tools are offered, until reset()', async () => {
    const mock = await startMockResponses();
    try {
      const tools = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} } }];
      const respond = async () => {
        const res = await fetch(`${mock.url}/responses`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${RESPONSES_MOCK_KEY}` },
          body: JSON.stringify({ model: 'gpt-4o-mini', input: 'Weather?', tools, store: false }),
          signal: signal(),
        });
        return ((await res.json()) as Json).output.map((item: Json) => [item.type, item.content?.[0]?.text ?? item.name]);
      };
      assert.deepEqual(await respond(), [['function_call', 'get_weather']]);
      mock.answerInText = true;
      assert.deepEqual(await respond(), [['message', RESPONSES_TEXT]]);
      mock.reset();
      assert.deepEqual(await respond(), [['function_call', 'get_weather']]);
    } finally {
      await mock.close();
    }
  });
});

describe('the Gemini mock', () => {
  test('answers generateContent shaped like the recorded ones, with usage 15 + contents / 8, and thoughts when asked', async () => {
    const body = { contents: [ask('Hi'), { role: 'model', parts: [{ text: 'Hello' }] }, ask('Again')] };
    const { status, json } = await google('generateContent', body);
    assert.equal(status, 200);
    const recorded = fixture('google/google-text.json');
    assert.deepEqual(Object.keys(json).sort(), Object.keys(recorded).sort());
    assert.deepEqual(Object.keys(json.candidates[0]).sort(), Object.keys(recorded.candidates[0]).sort());
    assert.deepEqual(json.candidates[0].content, { parts: [{ text: GEMINI_TEXT }], role: 'model' });
    assert.deepEqual(json.usageMetadata, { promptTokenCount: 18, candidatesTokenCount: 8, totalTokenCount: 26 });
    const thinking = { ...body, generationConfig: { thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } } };
    const thought = (await google('generateContent', thinking)).json;
    assert.deepEqual(thought.candidates[0].content.parts[0], { text: GEMINI_THOUGHT, thought: true });
    assert.deepEqual(thought.usageMetadata, geminiUsageFor(thinking));
    assert.equal(thought.usageMetadata.thoughtsTokenCount, 40);
    const json2 = (await google('generateContent', { ...body, generationConfig: { responseMimeType: 'application/json' } })).json;
    assert.deepEqual(JSON.parse(json2.candidates[0].content.parts[0].text), { answer: 42 });
  });

  test('streams `data: …\\r\\n\\r\\n` chunks with running usage, the last equal to the non-stream usage, and no [DONE]', async () => {
    const body = { contents: [ask('Hi')], generationConfig: { thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } } };
    const { status, headers, text } = await google('streamGenerateContent', body, { query: '?alt=sse' });
    assert.equal(status, 200);
    assert.match(headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.ok(text.endsWith('\r\n\r\n'));
    assert.doesNotMatch(text, /\[DONE\]|^event:/m);
    const chunks = text
      .slice(0, -4)
      .split('\r\n\r\n')
      .map((frame) => {
        assert.match(frame, /^data: [^\r\n]+$/);
        return JSON.parse(frame.slice('data: '.length));
      });
    assert.ok(chunks.length >= 3);
    for (const chunk of chunks) assert.equal(chunk.usageMetadata.promptTokenCount, 16, 'usage on every chunk');
    const counts = chunks.map((c) => c.usageMetadata.candidatesTokenCount);
    assert.deepEqual(counts, [...counts].sort((a, b) => a - b), 'cumulative, never a delta');
    assert.deepEqual(chunks.at(-1).usageMetadata, geminiUsageFor(body));
    assert.deepEqual(chunks.map((c) => c.candidates[0].finishReason ?? null).filter(Boolean), ['STOP'], 'only the last chunk finishes');
    assert.equal(chunks.flatMap((c) => c.candidates[0].content.parts).filter((p: Json) => !p.thought).map((p: Json) => p.text).join(''), GEMINI_TEXT);
    const array = await google('streamGenerateContent', body);
    assert.ok(Array.isArray(array.json), 'without alt=sse the stream is one JSON array');
  });

  test('calls the first declared function with a thoughtSignature, or the allowed one under ANY, and needs the signature back', async () => {
    const first = (await google('generateContent', { contents: [ask('Weather?')], tools: [weatherTool] })).json;
    const part = first.candidates[0].content.parts[0];
    assert.deepEqual(part, { functionCall: { name: 'get_weather', args: { location: 'Paris' } }, thoughtSignature: thoughtSignatureFor('get_weather') });
    const any = (await google('generateContent', { contents: [ask('Time?')], tools: [weatherTool], toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] } } })).json;
    assert.equal(any.candidates[0].content.parts[0].functionCall.name, 'get_time');
    const none = (await google('generateContent', { contents: [ask('Hi')], tools: [weatherTool], toolConfig: { functionCallingConfig: { mode: 'NONE' } } })).json;
    assert.deepEqual(none.candidates[0].content.parts, [{ text: GEMINI_TEXT }]);

    const response = { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp_c: 21 } } }] };
    const replayed = await google('generateContent', { contents: [ask('Weather?'), { role: 'model', parts: [part] }, response], tools: [weatherTool] });
    assert.equal(replayed.status, 200);
    assert.deepEqual(replayed.json.candidates[0].content.parts, [{ text: toolResultText('{"temp_c":21}') }]);
    const unsigned = await google('generateContent', { contents: [ask('Weather?'), { role: 'model', parts: [{ functionCall: part.functionCall }] }, response], tools: [weatherTool] });
    assert.equal(unsigned.status, 400);
    assert.equal(unsigned.json.error.status, 'INVALID_ARGUMENT');
    assert.match(unsigned.json.error.message, /thought_signature/);
  });

  test('embeds each request without any usage, and refuses a request naming another model', async () => {
    const requests = ['one', 'two words'].map((text) => ({ model: 'models/gemini-embedding-001', content: { parts: [{ text }] } }));
    const { status, json } = await google('batchEmbedContents', { requests }, { model: 'gemini-embedding-001' });
    assert.equal(status, 200);
    assert.deepEqual(json, { embeddings: [{ values: defaultEmbeddingFor('one') }, { values: defaultEmbeddingFor('two words') }] });
    const mismatch = await google('batchEmbedContents', { requests }, { model: 'text-embedding-004' });
    assert.equal(mismatch.status, 400);
  });

  test('refuses a missing key with 403 and a wrong one with 400 API_KEY_INVALID, in Google’s error shape', async () => {
    const missing = await google('generateContent', { contents: [ask('Hi')] }, { key: null });
    assert.equal(missing.status, 403);
    assert.deepEqual(Object.keys(missing.json.error).sort(), ['code', 'message', 'status']);
    assert.equal(missing.json.error.status, 'PERMISSION_DENIED');
    const wrong = await google('generateContent', { contents: [ask('Hi')] }, { key: 'AIza-wrong' });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.json.error.code, 400);
    assert.equal(wrong.json.error.details[0].reason, 'API_KEY_INVALID');
  });

  test('builds the 429 of the recording, with RetryInfo', () => {
    const reply = googleRateLimited('34.4s');
    assert.equal(reply.status, 429);
    assert.deepEqual(reply.json, fixture('google/google-429-retry-info.json'));
  });
});
