// Proves the mock upstream's default OpenAI behaviour, scripting and fault injection, so e2e tests can rely on it.
// (node:test returns promises from describe/test; `void` marks them as deliberately not awaited for the lint rule.)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import {
  DEFAULT_TEXT,
  chatChunks,
  cutAfter,
  decodeFloat32Base64,
  defaultEmbeddingUsageFor,
  defaultUsageFor,
  errorReply,
  inSequence,
  resetSocket,
  slowDrip,
  stall,
  sseFromChunks,
  startMockUpstream,
  type MockUpstream,
} from '../support/mock-upstream.js';
import { agentReplies } from '../support/mock-agent-replies.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are arbitrary JSON
type Json = any;

let mock: MockUpstream;
before(async () => {
  mock = await startMockUpstream();
});
after(() => mock.close());
beforeEach(() => mock.reset());

const hello = [{ role: 'user', content: 'Hi' }];
const post = (path: string, body: unknown) =>
  fetch(`${mock.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(300), // keeps a stalled reply from hanging the suite
  });
const chat = (body: Record<string, unknown>) => post('/chat/completions', { model: 'gpt-4o-mini', messages: hello, ...body });

/** The data payloads of an SSE body, after checking every event uses OpenAI's `data: ...\n\n` framing. */
function ssePayloads(text: string): string[] {
  assert.ok(text.endsWith('\n\n'), 'stream ends on an event boundary');
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((event) => {
      assert.match(event, /^data: [^\n]*$/);
      return event.slice('data: '.length);
    });
}

async function streamChunks(body: Record<string, unknown>): Promise<Json[]> {
  const res = await chat({ stream: true, ...body });
  assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  const payloads = ssePayloads(await res.text());
  assert.equal(payloads.at(-1), '[DONE]');
  return payloads.slice(0, -1).map((p) => JSON.parse(p));
}

/** Reads a body until it ends or the connection dies; reports what arrived and whether it failed. */
async function readUntilEnd(res: Response): Promise<{ text: string; failed: boolean }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, failed: false };
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    return { text, failed: true };
  }
}

/** A private mock, so sockets pooled by earlier fetches don't blur connection counts. */
async function withFreshMock(fn: (m: MockUpstream) => Promise<void>): Promise<void> {
  const m = await startMockUpstream();
  try {
    await fn(m);
  } finally {
    await m.close();
  }
}

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(condition(), `timed out waiting for ${what}`);
}

void describe('default chat completions', () => {
  void test('a non-stream request gets an OpenAI chat.completion echoing the model with deterministic usage', async () => {
    const res = await chat({ messages: [...hello, { role: 'assistant', content: 'Yo' }, { role: 'user', content: 'Again' }] });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    const body: Json = await res.json();
    assert.match(body.id, /^chatcmpl-mock/);
    assert.equal(body.object, 'chat.completion');
    assert.equal(typeof body.created, 'number');
    assert.equal(body.model, 'gpt-4o-mini');
    assert.deepEqual(body.choices[0].message, { role: 'assistant', content: DEFAULT_TEXT, refusal: null, annotations: [] });
    assert.equal(body.choices[0].finish_reason, 'stop');
    assert.deepEqual(body.usage, {
      prompt_tokens: 13,
      completion_tokens: 7,
      total_tokens: 20,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  void test('each response gets a fresh completion id even when the request repeats', async () => {
    const a: Json = await (await chat({})).json();
    const b: Json = await (await chat({})).json();
    assert.notEqual(a.id, b.id);
  });

  void test('a reasoning model reports reasoning tokens inside completion_tokens', async () => {
    const body: Json = await (await chat({ model: 'o3-mini-reasoning' })).json();
    assert.deepEqual(body.usage, defaultUsageFor({ model: 'o3-mini-reasoning', messages: hello }));
    assert.ok(body.usage.completion_tokens_details.reasoning_tokens > 0);
    assert.equal(body.usage.completion_tokens, 7 + body.usage.completion_tokens_details.reasoning_tokens);
    assert.equal(body.choices[0].message.reasoning_content, undefined);
  });

  void test('a request with tools gets a tool call to the first tool', async () => {
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }];
    const body: Json = await (await chat({ tools })).json();
    assert.equal(body.choices[0].finish_reason, 'tool_calls');
    assert.equal(body.choices[0].message.content, null);
    assert.deepEqual(body.choices[0].message.tool_calls, [
      { id: 'call_mock_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
    ]);
  });

  void test("tool_choice 'none' gets a plain text answer despite tools", async () => {
    const tools = [{ type: 'function', function: { name: 'get_weather' } }];
    const body: Json = await (await chat({ tools, tool_choice: 'none' })).json();
    assert.equal(body.choices[0].message.content, DEFAULT_TEXT);
    assert.equal(body.choices[0].message.tool_calls, undefined);
  });

  void test('JSON mode answers with JSON text', async () => {
    for (const response_format of [{ type: 'json_object' }, { type: 'json_schema', json_schema: { name: 'x', schema: {} } }]) {
      const body: Json = await (await chat({ response_format })).json();
      assert.deepEqual(JSON.parse(body.choices[0].message.content), { answer: 42 });
    }
  });
});

void describe('default chat streaming', () => {
  void test('a stream uses data: framing, role then content then finish chunks, and ends with [DONE]', async () => {
    const chunks = await streamChunks({});
    assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'gpt-4o-mini'));
    assert.equal(new Set(chunks.map((c) => c.id)).size, 1, 'one id across the stream');
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '', refusal: null });
    const last = chunks.at(-1);
    assert.deepEqual(last.choices[0].delta, {});
    assert.equal(last.choices[0].finish_reason, 'stop');
    const text = chunks.map((c) => c.choices[0].delta.content ?? '').join('');
    assert.equal(text, DEFAULT_TEXT);
    assert.ok(chunks.length >= 5, 'the text is split over several chunks');
  });

  void test('without include_usage no chunk carries a usage field', async () => {
    const chunks = await streamChunks({});
    assert.ok(chunks.every((c) => !('usage' in c)));
  });

  void test('with include_usage every chunk has usage null and a final choices-less chunk has the usage', async () => {
    const chunks = await streamChunks({ stream_options: { include_usage: true } });
    const final = chunks.at(-1);
    assert.deepEqual(final.choices, []);
    assert.deepEqual(final.usage, defaultUsageFor({ model: 'gpt-4o-mini', messages: hello }));
    assert.ok(chunks.slice(0, -1).every((c) => c.usage === null));
  });

  void test('a streamed tool call opens with id and name, then fragments that reassemble to the arguments', async () => {
    const chunks = await streamChunks({ tools: [{ type: 'function', function: { name: 'get_weather' } }] });
    const first = chunks[0].choices[0].delta;
    assert.equal(first.role, 'assistant');
    assert.deepEqual(first.tool_calls, [{ index: 0, id: 'call_mock_1', type: 'function', function: { name: 'get_weather', arguments: '' } }]);
    const args = chunks.flatMap((c) => c.choices[0].delta.tool_calls ?? []).map((t: Json) => t.function.arguments).join('');
    assert.equal(args, '{"location":"Paris"}');
    assert.ok(chunks.filter((c) => c.choices[0].delta.tool_calls).length > 2, 'arguments arrive in fragments');
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'tool_calls');
  });
});

void describe('default embeddings, models and errors', () => {
  void test('embeddings return one deterministic vector per input with word-count usage', async () => {
    const body: Json = await (await post('/embeddings', { model: 'text-embedding-3-small', input: ['one two three', 'four'] })).json();
    assert.equal(body.object, 'list');
    assert.equal(body.model, 'text-embedding-3-small');
    assert.deepEqual(body.data.map((d: Json) => [d.object, d.index, d.embedding.length]), [['embedding', 0, 8], ['embedding', 1, 8]]);
    assert.deepEqual(body.usage, { prompt_tokens: 4, total_tokens: 4 });
    assert.deepEqual(body.usage, defaultEmbeddingUsageFor({ input: ['one two three', 'four'] }));
    const again: Json = await (await post('/embeddings', { model: 'text-embedding-3-small', input: 'one two three' })).json();
    assert.deepEqual(again.data[0].embedding, body.data[0].embedding);
  });

  void test('base64 embeddings decode to exactly the floats of the float response', async () => {
    const input = ['alpha', [1, 2, 3]];
    const floats: Json = await (await post('/embeddings', { model: 'm', input })).json();
    const b64: Json = await (await post('/embeddings', { model: 'm', input, encoding_format: 'base64' })).json();
    assert.equal(typeof b64.data[0].embedding, 'string');
    assert.deepEqual(b64.data.map((d: Json) => decodeFloat32Base64(d.embedding)), floats.data.map((d: Json) => d.embedding));
    assert.equal(floats.usage.prompt_tokens, 1 + 3, 'a token array counts its tokens');
  });

  void test('GET /v1/models lists models the OpenAI way', async () => {
    const body: Json = await (await fetch(`${mock.url}/models`)).json();
    assert.equal(body.object, 'list');
    assert.ok(body.data.length > 0 && body.data.every((m: Json) => m.object === 'model' && typeof m.id === 'string'));
  });

  void test('an unknown path gets 404 with the OpenAI error envelope', async () => {
    const res = await post('/nope', {});
    assert.equal(res.status, 404);
    assert.deepEqual(await res.json(), { error: { message: 'Invalid URL (POST /v1/nope)', type: 'invalid_request_error', param: null, code: null } });
  });

  void test('a malformed JSON body gets a 400 OpenAI error', async () => {
    const res = await post('/chat/completions', '{"model": ');
    assert.equal(res.status, 400);
    const body: Json = await res.json();
    assert.equal(body.error.type, 'invalid_request_error');
    assert.equal(mock.requests[0]?.body, undefined);
    assert.equal(mock.requests[0]?.rawBody, '{"model": ');
  });
});

void describe('recording and scripting', () => {
  void test('requests are recorded in order with parsed and raw bodies', async () => {
    await chat({ temperature: 0 });
    await fetch(`${mock.url}/models?limit=1`, { headers: { authorization: 'Bearer sk-test' } });
    assert.equal(mock.requests.length, 2);
    const [first, second] = mock.requests;
    assert.equal(first?.method, 'POST');
    assert.equal(first?.path, '/v1/chat/completions');
    assert.equal(first?.body.temperature, 0);
    assert.deepEqual(JSON.parse(first?.rawBody ?? ''), first?.body);
    assert.equal(second?.path, '/v1/models');
    assert.equal(second?.url, '/v1/models?limit=1');
    assert.equal(second?.headers.authorization, 'Bearer sk-test');
    assert.ok(first!.receivedAt <= second!.receivedAt);
  });

  void test('record:false records nothing and still answers from the precomputed path', async () => {
    const quiet = await startMockUpstream({ record: false });
    try {
      for (let i = 0; i < 2; i++) {
        const res = await fetch(`${quiet.url}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'x', messages: hello }) });
        assert.equal(((await res.json()) as Json).choices[0].message.content, DEFAULT_TEXT);
      }
      assert.equal(quiet.requests.length, 0);
    } finally {
      await quiet.close();
    }
  });

  void test('record:false with agentReplies answers the recorded agent requests in their own wire formats, as plain text', async () => {
    const quiet = await startMockUpstream({ record: false, alsoAnswer: agentReplies() });
    const fixture = (name: string) => readFileSync(new URL(`../fixtures/agents/${name}`, import.meta.url));
    const send = async (path: string, body: Buffer) => (await fetch(`${quiet.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).text();
    try {
      const messages = [await send('/messages?beta=true', fixture('claude-code-2.1.197-turn1.json')), await send('/messages?beta=true', fixture('claude-code-2.1.197-turn2.json'))];
      for (const text of messages) {
        const events = text.split('\n\n').filter(Boolean);
        assert.match(events[0]!, /^event: message_start\ndata: /);
        assert.equal(events.at(-1), 'event: message_stop\ndata: {"type":"message_stop"}');
        assert.match(text, /"type":"thinking_delta"/);
        assert.match(text, /"type":"text_delta"/);
        assert.doesNotMatch(text, /tool_use/);
      }
      const id = (text: string) => /"id":"(msg_[^"]+)"/.exec(text)?.[1];
      assert.notEqual(id(messages[0]!), id(messages[1]!));
      const responses = await send('/responses', fixture('codex-0.171.0-turn1.json'));
      const types = [...responses.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
      assert.deepEqual([types[0], types.at(-1)], ['response.created', 'response.completed']);
      assert.ok(!types.some((type) => type!.startsWith('response.function_call')));
      assert.match(responses, /"output_tokens":32/);
    } finally {
      await quiet.close();
    }
  });

  void test('a custom handler reply replaces the default until handle(null)', async () => {
    mock.handle((req) => ({ status: 429, headers: { 'retry-after': '1' }, json: { error: { message: `slow down ${req.body.model}` } } }));
    const res = await chat({});
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), '1');
    assert.deepEqual(await res.json(), { error: { message: 'slow down gpt-4o-mini' } });
    mock.handle(null);
    assert.equal((await chat({})).status, 200);
  });

  void test('a scripted SSE reply is sent with the given chunks and usage style', async () => {
    mock.handle(() => sseFromChunks(chatChunks({ content: 'Hi there', usageMode: 'on-finish', usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } })));
    const chunks = await streamChunks({});
    assert.deepEqual(chunks.at(-1).usage, { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');
  });

  void test('inSequence answers with each source in turn, then the default', async () => {
    mock.handle(inSequence(errorReply(500, 'boom'), errorReply(429, 'later')));
    assert.deepEqual([(await chat({})).status, (await chat({})).status, (await chat({})).status], [500, 429, 200]);
  });

  void test('a throwing handler becomes a 500 error reply', async (t) => {
    t.mock.method(console, 'error', () => {});
    mock.handle(() => {
      throw new Error('oops');
    });
    assert.equal((await chat({})).status, 500);
  });

  void test('reset clears recorded requests and the handler', async () => {
    mock.handle(errorReply(503, 'down'));
    await chat({});
    mock.reset();
    assert.equal(mock.requests.length, 0);
    assert.equal((await chat({})).status, 200);
  });
});

void describe('fault injection and connection tracking', () => {
  void test('cutAfter sends n events and then closes the socket mid-stream', async () => {
    await withFreshMock(async (m) => {
      m.handle(cutAfter(2));
      const res = await fetch(`${m.url}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'x', messages: hello, stream: true }) });
      assert.equal(res.status, 200);
      const { text, failed } = await readUntilEnd(res);
      assert.ok(failed, 'the body errors instead of ending cleanly');
      assert.equal(ssePayloads(text).length, 2);
      await waitFor(() => m.openConnections() === 0 && m.closedConnections.length === 1, 'the cut socket to close');
    });
  });

  void test('cutAfter on a non-stream reply fails loudly', async (t) => {
    t.mock.method(console, 'error', () => {});
    mock.handle(cutAfter(1));
    assert.equal((await chat({})).status, 500);
  });

  void test('resetSocket kills the connection before any headers', async () => {
    mock.handle(resetSocket());
    await assert.rejects(chat({}));
  });

  void test('stall never answers and the request records when the client gave up', async () => {
    mock.handle(stall());
    const gaveUpAt = Date.now();
    await assert.rejects(chat({}).then((res) => res.text()), { name: 'TimeoutError' }, 'fetch should time out');
    await waitFor(() => mock.requests[0]?.abortedAt !== undefined, 'abortedAt to be set');
    assert.ok(mock.requests[0]!.abortedAt! >= gaveUpAt);
  });

  void test('slowDrip spaces the events out', async () => {
    mock.handle(slowDrip(25, sseFromChunks(['{"a":1}', '{"a":2}'])));
    const started = Date.now();
    const res = await chat({});
    assert.deepEqual(ssePayloads(await res.text()), ['{"a":1}', '{"a":2}', '[DONE]']);
    assert.ok(Date.now() - started >= 45);
  });

  void test('openConnections and closedConnections follow TCP sockets', async () => {
    await withFreshMock(async (m) => {
      const socket = net.connect(m.port, '127.0.0.1');
      await waitFor(() => m.openConnections() === 1, 'the socket to be accepted');
      assert.equal(m.closedConnections.length, 0);
      const endedAt = Date.now();
      socket.end();
      await waitFor(() => m.closedConnections.length === 1, 'the socket to close');
      assert.equal(m.openConnections(), 0);
      const closed = m.closedConnections[0]!;
      assert.ok(closed.openedAt <= endedAt && closed.closedAt >= endedAt);
    });
  });
});

void describe('builders', () => {
  void test('chatChunks can script running totals and an Azure prelude', () => {
    const chunks = chatChunks({ usageMode: 'running', azurePrelude: true, usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 } });
    assert.deepEqual(chunks[0]!.choices, []);
    assert.equal(chunks[0]!.id, '');
    const usages = chunks.slice(1).map((c) => (c.usage as { completion_tokens: number }).completion_tokens);
    assert.deepEqual([...usages].sort((a, b) => a - b), usages, 'running totals never decrease');
    assert.equal(usages.at(-1), 4);
  });
});
