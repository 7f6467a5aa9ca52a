// End to end: streaming chat completions through the real gateway process. The raw SSE is read with
// fetch so every `data:` payload is schema-checked and the framing is proven to end in `data: [DONE]`;
// the openai SDK consumes the same streams. Covers every upstream usage style, Azure's prelude, tool
// calls, mid-stream failures and client disconnects, each with its exact (or bounded) charge.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { CreatedKey } from '../support/gateway-process.js';
import {
  DEFAULT_TEXT,
  TOOL_ARGUMENTS,
  chatChunks,
  cutAfter,
  makeUsage,
  slowDrip,
  sseFromChunks,
} from '../support/mock-upstream.js';
import { assertMatchesSchema } from '../support/openapi.js';
import {
  assertErrorResponse,
  costOf,
  finalUsageChunk,
  postChat,
  ssePayloads,
  startE2EWithKey,
  stopE2E,
  streamChat,
  streamedText,
  validateStreamEvents,
  waitFor,
  type E2E,
  type Json,
  type StreamRead,
} from '../support/e2e.js';
import { assertLedgerSettled, holdOf, UsageExpectations, type ExpectedRow, type UsageRow } from '../support/ledger-check.js';
import { chatCostNano } from '../support/money.js';

const hello = [{ role: 'user', content: 'Hello' }];
const WEATHER_TOOL = {
  type: 'function' as const,
  function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } },
};

describe('chat completions (stream)', () => {
  let e: E2E;
  let key: CreatedKey;
  let client: OpenAI;

  before(async () => {
    ({ e, key, client } = await startE2EWithKey({ name: 'stream', balance: 10 }));
  });
  after(() => stopE2E(e));
  beforeEach(() => e.mock.reset());

  /** Usage rows are checked at the end of the file, with one `tollgate usage --json` run. */
  const expectedRows = new UsageExpectations();
  function checkRow(exp: Omit<ExpectedRow, 'keyId'>, extra?: (row: UsageRow) => void): void {
    expectedRows.add({ keyId: key.id, ...exp }, extra);
  }

  /** Streams with fetch, checks the one final usage chunk, and that its cost is what the ledger charged. */
  async function stream(body: Record<string, unknown>): Promise<{ read: StreamRead; final: Json; cost: number }> {
    const before = e.gw.audit(key.id);
    const read = await streamChat(e.gw, key.key, body);
    assert.equal(read.error, undefined, 'no error event');
    const final = finalUsageChunk(read.chunks, body.model as string);
    const cost = costOf(final.usage);
    const after = assertLedgerSettled(e.gw, key.id);
    assert.equal(after.spent - before.spent, cost, 'the ledger charged what usage.cost says');
    assert.equal(after.captures - before.captures, 1, 'one capture');
    assert.equal(after.usageRows - before.usageRows, 1, 'one usage row');
    return { read, final, cost };
  }

  test('streams the chunks, then exactly one choices: [] chunk with usage and cost, then [DONE]', async () => {
    const { read, final, cost } = await stream({ model: 'gpt-test', messages: hello });
    assert.equal(streamedText(read.chunks), DEFAULT_TEXT);
    assert.ok(read.chunks.length > 3, 'the content arrives in several chunks');
    assert.equal(read.chunks.filter((c) => c.choices[0]?.finish_reason === 'stop').length, 1);
    assert.equal(final.usage.prompt_tokens, 11);
    assert.equal(final.usage.completion_tokens, 7);
    assert.equal(final.usage.total_tokens, 18);
    assert.equal(cost, chatCostNano(11, 7));
    // The client never asked for usage; the gateway asked the upstream for it.
    assert.deepEqual(e.mock.requests[0]!.body, { model: 'gpt-4o-mini', messages: hello, stream: true, stream_options: { include_usage: true } });
    checkRow({ requestId: read.requestId, model: 'gpt-test', upstreamModel: 'gpt-4o-mini', input: 11, output: 7, costNano: cost });
  });

  test('keeps the client’s other stream_options while forcing include_usage on', async () => {
    const { read, cost } = await stream({ model: 'gpt-test', messages: hello, stream_options: { include_usage: false, include_obfuscation: false } });
    assert.deepEqual(e.mock.requests[0]!.body.stream_options, { include_usage: true, include_obfuscation: false });
    assert.equal(cost, chatCostNano(11, 7));
    checkRow({ requestId: read.requestId, model: 'gpt-test', upstreamModel: 'gpt-4o-mini', input: 11, output: 7, costNano: cost });
  });

  test('the openai SDK consumes the stream, and each chunk it yields matches the schema', async () => {
    const before = e.gw.audit(key.id);
    const { data: sdkStream, response } = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }], stream: true }).withResponse();
    assert.ok(response.headers.get('x-request-id'));
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of sdkStream) {
      assertMatchesSchema('CreateChatCompletionStreamResponse', chunk);
      chunks.push(chunk);
    }
    assert.equal(streamedText(chunks), DEFAULT_TEXT);
    const final = finalUsageChunk(chunks, 'gpt-test');
    const cost = chatCostNano(11, 7);
    assert.equal(costOf(final.usage), cost);
    assert.equal(assertLedgerSettled(e.gw, key.id).spent - before.spent, cost);
    checkRow({ requestId: response.headers.get('x-request-id')!, model: 'gpt-test', upstreamModel: 'gpt-4o-mini', input: 11, output: 7, costNano: cost });
  });

  test('usage on the finish chunk (DeepSeek / Mistral style) becomes the one final usage chunk, charged exactly', async () => {
    e.mock.handle(sseFromChunks(chatChunks({ usageMode: 'on-finish', usage: makeUsage(20, 9) })));
    const { read, final, cost } = await stream({ model: 'gpt-test', messages: hello });
    assert.equal(streamedText(read.chunks), DEFAULT_TEXT);
    assert.equal(final.usage.prompt_tokens, 20);
    assert.equal(final.usage.completion_tokens, 9);
    assert.equal(cost, chatCostNano(20, 9));
    checkRow({ requestId: read.requestId, model: 'gpt-test', upstreamModel: 'gpt-4o-mini', input: 20, output: 9, costNano: cost });
  });

  test('running usage totals (vLLM style) are charged once at the final totals, never summed', async () => {
    e.mock.handle(sseFromChunks(chatChunks({ usageMode: 'running', usage: makeUsage(30, 12) })));
    const { read, final, cost } = await stream({ model: 'gpt-test', messages: hello });
    assert.equal(final.usage.prompt_tokens, 30);
    assert.equal(final.usage.completion_tokens, 12);
    assert.equal(cost, chatCostNano(30, 12));
    checkRow({ requestId: read.requestId, model: 'gpt-test', upstreamModel: 'gpt-4o-mini', input: 30, output: 12, costNano: cost });
  });

  test('a stream with no usage at all is charged an estimate: more than zero, at most the hold', async () => {
    e.mock.handle(sseFromChunks(chatChunks({ usageMode: 'none' })));
    const { read, cost } = await stream({ model: 'gpt-test', messages: hello, max_tokens: 100 });
    assert.equal(streamedText(read.chunks), DEFAULT_TEXT);
    const hold = holdOf(e.gw, read.requestId)!.amount;
    assert.ok(cost > 0 && cost <= hold, `0 < cost ${cost} <= hold ${hold}`);
    checkRow({ requestId: read.requestId, model: 'gpt-test', upstreamModel: 'gpt-4o-mini', costNano: cost, source: 'estimated' });
  });

  test('an Azure-style prelude chunk (object "", no choices, prompt_filter_results) is not forwarded', async () => {
    e.mock.handle(sseFromChunks(chatChunks({ azurePrelude: true })));
    const { read, cost } = await stream({ model: 'gpt-test', messages: hello });
    for (const chunk of read.chunks) {
      assert.equal(chunk.prompt_filter_results, undefined, 'no prompt_filter_results chunk');
      assert.notEqual(chunk.id, '', 'no chunk with an empty id');
    }
    assert.equal(read.chunks[0].choices[0].delta.role, 'assistant', 'the first chunk is the role chunk');
    assert.equal(streamedText(read.chunks), DEFAULT_TEXT);
    assert.equal(cost, chatCostNano(10, 7));
    checkRow({ requestId: read.requestId, model: 'gpt-test', upstreamModel: 'gpt-4o-mini', input: 10, output: 7, costNano: cost });
  });

  test('streamed tool-call fragments accumulate to the id, name and arguments', async () => {
    const { read, cost } = await stream({ model: 'gpt-test', messages: hello, tools: [WEATHER_TOOL] });
    const calls = new Map<number, { id?: string; name: string; arguments: string }>();
    for (const chunk of read.chunks) {
      for (const call of (chunk.choices[0]?.delta?.tool_calls ?? []) as Json[]) {
        const entry = calls.get(call.index) ?? { name: '', arguments: '' };
        if (call.id) entry.id = call.id;
        entry.name += call.function?.name ?? '';
        entry.arguments += call.function?.arguments ?? '';
        calls.set(call.index, entry);
      }
    }
    assert.deepEqual([...calls.values()], [{ id: 'call_mock_1', name: 'get_weather', arguments: TOOL_ARGUMENTS }]);
    assert.equal(read.chunks.filter((c) => c.choices[0]?.finish_reason === 'tool_calls').length, 1);
    assert.equal(cost, chatCostNano(11, 7));
    checkRow({ requestId: read.requestId, model: 'gpt-test', upstreamModel: 'gpt-4o-mini', input: 11, output: 7, costNano: cost });
  });

  test('the SDK stream helper assembles a streamed tool call', async () => {
    const before = e.gw.audit(key.id);
    const runner = client.chat.completions.stream({ model: 'gpt-test', messages: [{ role: 'user', content: 'Weather?' }], tools: [WEATHER_TOOL] });
    const seen: ChatCompletionChunk[] = [];
    runner.on('chunk', (chunk) => {
      assertMatchesSchema('CreateChatCompletionStreamResponse', chunk);
      seen.push(chunk);
    });
    const completion = await runner.finalChatCompletion();
    const call = completion.choices[0]!.message.tool_calls![0]!;
    assert.equal(call.id, 'call_mock_1');
    assert.ok(call.type === 'function');
    assert.equal(call.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.function.arguments), { location: 'Paris' });
    assert.equal(completion.choices[0]!.finish_reason, 'tool_calls');
    const final = finalUsageChunk(seen, 'gpt-test');
    assert.equal(costOf(final.usage), chatCostNano(11, 7));
    assert.equal(assertLedgerSettled(e.gw, key.id).spent - before.spent, chatCostNano(11, 7));
  });

  test('a reasoning model streams with max_completion_tokens and reasoning tokens are charged as output', async () => {
    const { read, final, cost } = await stream({ model: 'gpt-reasoning', messages: hello, max_completion_tokens: 200 });
    assert.equal(final.usage.completion_tokens, 23);
    assert.equal(final.usage.completion_tokens_details.reasoning_tokens, 16);
    assert.equal(cost, chatCostNano(11, 23));
    assert.equal(e.mock.requests[0]!.body.max_completion_tokens, 200);
    checkRow({ requestId: read.requestId, model: 'gpt-reasoning', upstreamModel: 'o3-mini-reasoning', input: 11, output: 23, reasoning: 16, costNano: cost });
  });

  describe('mid-stream failures', () => {
    test('an upstream cut after some content ends the stream with an error event then [DONE], charged an estimate', async () => {
      e.mock.handle(cutAfter(3)); // the role chunk and two content chunks, then the socket closes
      const before = e.gw.audit(key.id);
      const read = await streamChat(e.gw, key.key, { model: 'gpt-test', messages: hello });
      assert.ok(read.error, 'the stream ends with a data: {"error":...} event');
      assert.equal(read.error.code, 'upstream_error');
      assert.equal(read.events.at(-1), read.events.find((x) => x.error), 'the error event is the last before [DONE]');
      assert.equal(streamedText(read.chunks), 'Hello from', 'the content received before the cut was relayed');
      assert.equal(read.chunks.filter((c) => c.choices.length === 0).length, 0, 'no usage chunk after a cut');
      const after = assertLedgerSettled(e.gw, key.id);
      const charged = after.spent - before.spent;
      const hold = holdOf(e.gw, read.requestId)!.amount;
      assert.ok(charged > 0 && charged <= hold, `0 < charge ${charged} <= hold ${hold}`);
      checkRow(
        { label: 'cut after content', requestId: read.requestId, model: 'gpt-test', upstreamModel: 'gpt-4o-mini', status: [200, 502], attempts: 'any', costNano: charged, source: 'estimated' },
        (row) => assert.ok(row.output_tokens > 0, 'the relayed output is counted'),
      );
    });

    test('an upstream 200 stream that ends in an error event is relayed as the final error event, then [DONE]', async () => {
      const chunks = chatChunks({ content: ['Partial ', 'answer'] }).slice(0, 3);
      e.mock.handle(sseFromChunks([...chunks, JSON.stringify({ error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } })], { done: false }));
      const before = e.gw.audit(key.id);
      const read = await streamChat(e.gw, key.key, { model: 'gpt-test', messages: hello });
      assert.ok(read.error, 'error event');
      assert.equal(streamedText(read.chunks), 'Partial answer');
      const charged = assertLedgerSettled(e.gw, key.id).spent - before.spent;
      assert.ok(charged > 0 && charged <= holdOf(e.gw, read.requestId)!.amount);
      checkRow({ label: 'error event in a 200 stream', requestId: read.requestId, model: 'gpt-test', upstreamModel: 'gpt-4o-mini', status: [200, 502], attempts: 'any', costNano: charged, source: 'estimated' });
    });

    test('an upstream cut before any event is retried once, then answers a 502 JSON error (no SSE), releases the hold and charges nothing', async () => {
      e.mock.handle(cutAfter(0));
      const before = e.gw.audit(key.id);
      const res = await postChat(e.gw, key.key, { model: 'gpt-test', messages: hello, stream: true });
      const requestId = res.headers.get('x-request-id')!;
      assertErrorResponse(res, 502, 'upstream_error');
      const after = assertLedgerSettled(e.gw, key.id);
      assert.equal(after.spent, before.spent, 'nothing charged');
      assert.equal(after.balance, before.balance);
      assert.equal(holdOf(e.gw, requestId)?.status, 'released');
      assert.equal(e.mock.requests.length, 2, 'the default retries: 1 tries the upstream twice');
      assert.equal(after.usageRows - before.usageRows, 1, 'a usage row for the failed request');
      checkRow({ label: 'cut before any event', requestId, model: 'gpt-test', upstreamModel: 'gpt-4o-mini', status: 502, attempts: 'any', source: 'any', costNano: 0 });
    });

    test('a stream cut after only the role chunk charges nothing and still ends in an error', async () => {
      e.mock.handle(cutAfter(1));
      const before = e.gw.audit(key.id);
      const res = await postChat(e.gw, key.key, { model: 'gpt-test', messages: hello, stream: true });
      if (res.status === 200) {
        const { error } = validateStreamEvents(ssePayloads(res.text));
        assert.ok(error, 'the stream ends with an error event');
      } else {
        assertErrorResponse(res, 502, 'upstream_error');
      }
      const after = assertLedgerSettled(e.gw, key.id);
      assert.equal(after.spent, before.spent, 'no output reached the client: nothing charged');
      assert.equal(after.usageRows - before.usageRows, 1, 'a usage row for the failed request');
      checkRow({ label: 'cut after the role chunk', requestId: res.headers.get('x-request-id')!, model: 'gpt-test', upstreamModel: 'gpt-4o-mini', status: 502, attempts: 'any', source: 'any', costNano: 0 });
    });
  });

  describe('client disconnect', () => {
    test('aborting mid-stream closes the upstream connection within about a second and settles the request once, as 499', async () => {
      e.mock.handle(slowDrip(250));
      const before = e.gw.audit(key.id);
      const controller = new AbortController();
      const res = await fetch(`${e.gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-test', messages: hello, stream: true, max_tokens: 200 }),
        signal: controller.signal,
      });
      assert.equal(res.status, 200);
      const requestId = res.headers.get('x-request-id')!;
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let received = '';
      while (!received.includes('"content":"Hello')) {
        const { value, done } = await reader.read();
        assert.ok(!done, 'the stream is still open');
        received += decoder.decode(value, { stream: true });
      }
      const abortedAt = Date.now();
      controller.abort();
      await reader.cancel().catch(() => undefined);

      const upstreamClosedAt = await waitFor(() => e.mock.requests[0]?.abortedAt, 3000);
      assert.ok(upstreamClosedAt, 'the upstream request was aborted');
      assert.ok(upstreamClosedAt - abortedAt < 1500, `upstream closed ${upstreamClosedAt - abortedAt} ms after the client left`);
      assert.ok(e.mock.closedConnections.some((c) => c.closedAt >= abortedAt), 'the mock saw its connection close');

      const settled = await waitFor(() => {
        const audit = e.gw.audit(key.id);
        return audit.activeHolds === 0 && audit.usageRows > before.usageRows ? audit : undefined;
      }, 3000);
      assert.ok(settled, 'the request settled and no hold stays active');
      assert.equal(settled.captures - before.captures, 1, 'settled exactly once');
      assert.equal(settled.usageRows - before.usageRows, 1, 'one usage row');
      assertLedgerSettled(e.gw, key.id);
      const hold = holdOf(e.gw, requestId)!.amount;
      const charged = settled.spent - before.spent;
      assert.ok(charged > 0 && charged <= hold, `0 < charge ${charged} <= hold ${hold}`);
      checkRow({ label: 'client disconnect', requestId, model: 'gpt-test', upstreamModel: 'gpt-4o-mini', status: 499, attempts: 'any', costNano: charged, source: 'estimated' });
    });
  });

  test('every request left one usage row (tokens, cost, source, provider, attempts) and the rows add up to the ledger', async () => {
    await expectedRows.verify(e.gw, [key.id]);
  });
});
