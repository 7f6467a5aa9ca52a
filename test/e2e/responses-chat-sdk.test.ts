// POST /v1/responses in its translated cell (docs/adr/0044-responses-to-chat.md): a model routed to an
// `openai-compatible` provider that serves only chat completions (the mock OpenAI upstream), driven by the
// real `openai` SDK — responses.create and responses.stream().finalResponse(): the text, a function-call
// round trip with the call ids mapped both ways, the usage in the Responses convention with cached tokens
// billed once (the charge computed independently from the upstream's usage), `length` → incomplete billed
// from its usage, a cut stream estimated above zero and within its hold, stored state refused without an
// upstream call, an upstream 400 as invalid_request with its words, and the recorded Codex 0.171 body
// accepted and billed.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { startGateway, stopGateway, readDatabase, mockConfig, type GatewayProcess } from '../support/gateway-process.js';
import { chatChunks, chatCompletion, DEFAULT_TEXT, makeUsage, sseFromChunks, startMockUpstream, TOOL_ARGUMENTS, toolResultText, type MockUpstream } from '../support/mock-upstream.js';
import { chatCostNano, usdToNano } from '../support/money.js';
import { assertMatchesSchema } from '../support/openapi.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers and events are arbitrary JSON
type Json = any;

/** gpt-test: the mock's gpt-4o-mini on an openai-compatible provider (chat only), max_output_tokens 1000. */
const MODEL = 'gpt-test';
const WEATHER_TOOL = { type: 'function' as const, name: 'get_weather', description: 'The weather in a city.', strict: true, parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'], additionalProperties: false } };
/** The canonical price of a Responses usage object (input includes cached), computed apart from the gateway. */
const priceOf = (usage: Json) => chatCostNano(usage.input_tokens, usage.output_tokens, usage.input_tokens_details?.cached_tokens ?? 0);

describe('the Responses API translated to a chat-only upstream, through the openai SDK', () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;

  before(async () => {
    mock = await startMockUpstream();
    gw = await startGateway({ config: mockConfig(mock) });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
  });
  beforeEach(() => mock.reset());

  const sdk = (key: string) => new OpenAI({ apiKey: key, baseURL: gw.baseURL, maxRetries: 0, timeout: 20_000 });
  const rowsOf = (keyId: string) =>
    readDatabase(gw.dbPath, (db) => db.prepare('SELECT status, error_code, cost, usage_source, endpoint, input_tokens, output_tokens FROM usage_records WHERE key_id = ? ORDER BY rowid').all(keyId)) as Json[];

  test('responses.create: a Response with the text, from a chat request (instructions as its system message, the model maximum as max_tokens), charged its usage', async () => {
    const key = await gw.createKey({ name: 'text' });
    const response = await sdk(key.key).responses.create({ model: MODEL, input: 'Say hello.', instructions: 'Be brief.' });
    assertMatchesSchema('Response', response);
    assert.equal(response.output_text, DEFAULT_TEXT);
    assert.equal(response.status, 'completed');
    assert.match(response.id, /^resp_/);
    const [upstream] = mock.requests;
    assert.equal(upstream!.path, '/v1/chat/completions');
    assert.deepEqual(upstream!.body.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Say hello.' },
    ]);
    assert.equal(upstream!.body.max_tokens, 1000);
    const cost = usdToNano((response.usage as Json).cost);
    assert.equal(cost, priceOf(response.usage));
    assert.equal(gw.audit(key.id).spent, cost);
    const [row] = rowsOf(key.id);
    assert.deepEqual([row.status, row.endpoint, row.usage_source, row.cost], [200, 'responses', 'upstream', cost]);
  });

  test('responses.stream().finalResponse(): events numbered from 0, one terminal response.completed with usage.cost; the key charged that', async () => {
    const key = await gw.createKey({ name: 'stream' });
    const runner = sdk(key.key).responses.stream({ model: MODEL, input: 'Say hello.' });
    const events: Json[] = [];
    runner.on('event', (event) => events.push(event));
    const final = await runner.finalResponse();
    assert.equal(final.output_text, DEFAULT_TEXT);
    assert.deepEqual(
      events.map((e) => e.sequence_number),
      events.map((_, i) => i),
    );
    assert.equal(events.filter((e) => /^response\.(completed|incomplete|failed)$/.test(e.type)).length, 1);
    assert.equal(events.at(-1).type, 'response.completed');
    assert.ok(events.some((e) => e.type === 'response.output_item.done' && e.item.type === 'message' && e.item.content[0].text === DEFAULT_TEXT));
    const cost = usdToNano((final.usage as Json).cost);
    assert.equal(cost, priceOf(final.usage));
    assert.equal(gw.audit(key.id).spent, cost);
  });

  test('a function-call round trip with the whole history (store: false): call ids round-trip, an id chat would reject mapped both ways', async () => {
    const key = await gw.createKey({ name: 'tools' });
    const client = sdk(key.key);
    // Kimi-style id, which OpenAI's chat API would refuse back.
    mock.handle({ json: chatCompletion({ toolCalls: [{ id: 'functions.get_weather:0', name: 'get_weather', arguments: TOOL_ARGUMENTS }], usage: makeUsage(40, 12) }) });
    const first = await client.responses.create({ model: MODEL, store: false, input: 'Weather in Paris?', tools: [WEATHER_TOOL] });
    const call = first.output.find((item) => item.type === 'function_call');
    assert.ok(call && call.type === 'function_call');
    assert.deepEqual([call.name, call.arguments], ['get_weather', TOOL_ARGUMENTS]);
    assert.match(call.call_id, /^call_[A-Za-z0-9_-]{24}$/);
    mock.handle(null);
    const runner = client.responses.stream({
      model: MODEL,
      store: false,
      tools: [WEATHER_TOOL],
      input: [{ role: 'user', content: 'Weather in Paris?' }, call, { type: 'function_call_output', call_id: call.call_id, output: '18 C and sunny' }],
    });
    const final = await runner.finalResponse();
    assert.equal(final.output_text, toolResultText('18 C and sunny'));
    const messages = mock.requests[1]!.body.messages;
    assert.deepEqual(messages[1].tool_calls, [{ id: call.call_id, type: 'function', function: { name: 'get_weather', arguments: TOOL_ARGUMENTS } }]);
    assert.deepEqual(messages[2], { role: 'tool', tool_call_id: call.call_id, content: '18 C and sunny' });
    assert.equal(gw.audit(key.id).spent, priceOf(first.usage) + priceOf(final.usage));
  });

  test('a streamed call: a complete function_call item in output_item.done and the terminal response', async () => {
    const key = await gw.createKey({ name: 'stream-call' });
    const runner = sdk(key.key).responses.stream({ model: MODEL, input: 'Weather?', tools: [WEATHER_TOOL] });
    const done: Json[] = [];
    runner.on('response.output_item.done', (event) => done.push(event.item));
    const final = await runner.finalResponse();
    assert.deepEqual(
      done.map((item) => [item.type, item.name, item.call_id, item.arguments, item.status]),
      [['function_call', 'get_weather', 'call_mock_1', TOOL_ARGUMENTS, 'completed']],
    );
    // The SDK adds parsed_arguments to the function calls it accumulated.
    assert.deepEqual(
      final.output.map((item) => ({ ...item, parsed_arguments: undefined })),
      done.map((item) => ({ ...item, parsed_arguments: undefined })),
    );
  });

  test('cached tokens: input_tokens includes them (Responses convention), cached_tokens names them, and they are billed once at the cached price', async () => {
    const key = await gw.createKey({ name: 'cached' });
    mock.handle({ json: chatCompletion({ usage: makeUsage(1000, 20, { cached: 800 }) }) });
    const response = await sdk(key.key).responses.create({ model: MODEL, input: 'Hi again.' });
    const usage = response.usage as Json;
    assert.deepEqual([usage.input_tokens, usage.input_tokens_details.cached_tokens, usage.output_tokens, usage.total_tokens], [1000, 800, 20, 1020]);
    // 200 uncached at $1, 800 cached at $0.5, 20 output at $2 per 1M: computed from the upstream's counts.
    const expected = chatCostNano(1000, 20, 800);
    assert.equal(expected, 200 * 1000 + 800 * 500 + 20 * 2000);
    assert.equal(usdToNano(usage.cost), expected);
    assert.equal(gw.audit(key.id).spent, expected);
  });

  test('finish_reason length → status incomplete (max_output_tokens), billed from the usage; streamed: one response.incomplete', async () => {
    const key = await gw.createKey({ name: 'length' });
    mock.handle({ json: chatCompletion({ finishReason: 'length', usage: makeUsage(30, 50) }) });
    const whole = await sdk(key.key).responses.create({ model: MODEL, input: 'Write a lot.', max_output_tokens: 50 });
    assert.equal(whole.status, 'incomplete');
    assert.deepEqual(whole.incomplete_details, { reason: 'max_output_tokens' });
    assert.equal(mock.requests[0]!.body.max_tokens, 50);
    mock.handle(sseFromChunks(chatChunks({ content: ['Lots ', 'of ', 'text'], finishReason: 'length', usage: makeUsage(30, 50), usageMode: 'final-chunk' })));
    const events: Json[] = [];
    for await (const event of await sdk(key.key).responses.create({ model: MODEL, input: 'Write a lot.', stream: true })) events.push(event);
    assert.equal(events.at(-1).type, 'response.incomplete');
    assert.equal(events.filter((e) => e.type.startsWith('response.') && /completed|incomplete|failed/.test(e.type)).length, 1);
    assert.equal(usdToNano(events.at(-1).response.usage.cost), chatCostNano(30, 50));
    assert.deepEqual(
      rowsOf(key.id).map((r) => [r.usage_source, r.cost]),
      [
        ['upstream', chatCostNano(30, 50)],
        ['upstream', chatCostNano(30, 50)],
      ],
    );
  });

  test('a stream cut mid-way: one response.failed, estimated from the output delivered — above zero, within the hold', async () => {
    const key = await gw.createKey({ name: 'cut' });
    const body = { model: MODEL, input: 'Hi', stream: true as const };
    const quote = await fetch(`${gw.baseURL}/responses`, { method: 'POST', headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json', 'x-tollgate-dry-run': '1' }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<Json>);
    mock.handle({ ...sseFromChunks(chatChunks({ content: ['The ', 'answer ', 'is ', 'long ', 'and ', 'never ', 'ends'] })), cutAfter: 5 });
    const events: Json[] = [];
    for await (const event of await sdk(key.key).responses.create(body)) events.push(event);
    const last = events.at(-1);
    assert.equal(last.type, 'response.failed');
    assert.ok(usdToNano(last.response.usage.cost) > 0);
    const row = rowsOf(key.id).at(-1);
    assert.equal(row.usage_source, 'estimated');
    assert.ok(row.output_tokens > 0);
    assert.ok(row.cost > 0 && row.cost <= usdToNano(quote.hold), `estimated ${row.cost}, hold ${quote.hold}`);
    assert.equal(gw.audit(key.id).spent, row.cost);
  });

  test('previous_response_id and item_reference: 400 unsupported_parameter (send the full history), no upstream call, nothing charged', async () => {
    const key = await gw.createKey({ name: 'stateful' });
    await assert.rejects(sdk(key.key).responses.create({ model: MODEL, input: 'Hi', previous_response_id: 'resp_abc' }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError);
      assert.equal(error.code, 'unsupported_parameter');
      assert.equal(error.param, 'previous_response_id');
      assert.match(error.message, /full history .*store: false/);
      return true;
    });
    await assert.rejects(sdk(key.key).responses.create({ model: MODEL, input: [{ type: 'item_reference', id: 'msg_1' }] }), (error: unknown) => error instanceof OpenAI.BadRequestError && error.code === 'unsupported_parameter');
    assert.equal(mock.requests.length, 0);
    assert.equal(gw.audit(key.id).spent, 0);
  });

  test("an upstream 400 is BadRequestError invalid_request with the upstream's words; a forced built-in tool is refused before any call", async () => {
    const key = await gw.createKey({ name: 'refused' });
    mock.handle({ status: 400, json: { error: { message: "'reasoning_effort' is not supported by this model.", type: 'invalid_request_error', param: 'reasoning_effort', code: null } } });
    await assert.rejects(sdk(key.key).responses.create({ model: MODEL, input: 'Hi', reasoning: { effort: 'high' } }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError);
      assert.equal(error.code, 'invalid_request');
      assert.match(error.message, /reasoning_effort' is not supported/);
      return true;
    });
    mock.reset();
    await assert.rejects(sdk(key.key).responses.create({ model: MODEL, input: 'Hi', tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } } as Json), (error: unknown) => error instanceof OpenAI.BadRequestError && error.code === 'unsupported_parameter');
    assert.equal(mock.requests.length, 0);
  });

  test("input_tokens.count on a translated model: the gateway's estimate, no upstream call, nothing charged", async () => {
    const key = await gw.createKey({ name: 'count' });
    const counted = await sdk(key.key).responses.inputTokens.count({ model: MODEL, input: 'Hi there.' });
    assert.equal(counted.object, 'response.input_tokens');
    assert.ok(counted.input_tokens > 0);
    assert.equal(mock.requests.length, 0);
    assert.equal(gw.audit(key.id).spent, 0);
  });

  test('the recorded Codex 0.171 request goes through: web_search dropped, its functions (and sub-agent namespace) sent as chat tools, the stream completed and billed', async () => {
    const key = await gw.createKey({ name: 'codex' });
    const codex = JSON.parse(readFileSync(new URL('../fixtures/agents/codex-0.171.0-turn2.json', import.meta.url), 'utf8')) as Json;
    const response = await fetch(`${gw.baseURL}/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ ...codex, model: MODEL }),
    });
    assert.equal(response.status, 200);
    const events = (await response.text())
      .split('\n\n')
      .filter(Boolean)
      .map((frame) => JSON.parse(frame.split('\n').find((line) => line.startsWith('data: '))!.slice(6)) as Json);
    const last = events.at(-1);
    assert.equal(last.type, 'response.completed');
    const upstream = mock.requests[0]!.body;
    const names = upstream.tools.map((tool: Json) => tool.function.name);
    assert.ok(names.includes('exec_command') && names.includes('spawn_agent'), names.join());
    assert.ok(!upstream.tools.some((tool: Json) => tool.type !== 'function'));
    assert.equal(upstream.messages.filter((m: Json) => m.role === 'system').length, 1);
    assert.equal(upstream.max_tokens, 1000);
    const cost = usdToNano(last.response.usage.cost);
    assert.ok(cost > 0);
    assert.equal(cost, priceOf(last.response.usage));
    assert.equal(gw.audit(key.id).spent, cost);
  });
});
