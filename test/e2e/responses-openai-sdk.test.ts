// POST /v1/responses through a spawned gateway, driven by the real `openai` SDK (responses.create, stream
// and not), against the mock Responses upstream: text and a function-call round trip charged exactly what
// the upstream reported (usage.cost on the answer and on the terminal event), response.incomplete and
// response.failed billed from their usage, a stream cut mid-way estimated above zero and within its hold,
// a continuation by previous_response_id pinned and held, and the refusals surfaced as the SDK's typed
// errors — a 429 insufficient_quota not retried even with the SDK's retries on.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startGateway, stopGateway, readDatabase, type GatewayProcess } from '../support/gateway-process.js';
import { makeResponsesUsage, responsesConfig, responsesStreamReply, RESPONSES_TEXT, startMockResponses, type MockResponses } from '../support/mock-responses.js';
import { TOOL_ARGUMENTS, toolResultText } from '../support/mock-defaults.js';
import { usdToNano } from '../support/money.js';
import { assertMatchesSchema } from '../support/openapi.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers and events are arbitrary JSON
type Json = any;

/** gpt-resp's prices: $1 input, $0.5 cached, $2 output per 1M tokens, in nano-dollars per token. */
const price = (usage: { input_tokens: number; output_tokens: number; input_tokens_details?: { cached_tokens: number } }) =>
  (usage.input_tokens - (usage.input_tokens_details?.cached_tokens ?? 0)) * 1000 + (usage.input_tokens_details?.cached_tokens ?? 0) * 500 + usage.output_tokens * 2000;

const WEATHER_TOOL = { type: 'function' as const, name: 'get_weather', description: 'The weather in a city.', strict: true, parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'], additionalProperties: false } };

describe('the Responses API through the openai SDK', () => {
  let mock: MockResponses;
  let gw: GatewayProcess;

  before(async () => {
    mock = await startMockResponses();
    gw = await startGateway({ config: responsesConfig(mock) });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
  });
  beforeEach(() => mock.reset());

  const sdk = (key: string, maxRetries = 0) => new OpenAI({ apiKey: key, baseURL: gw.baseURL, maxRetries, timeout: 20_000 });

  /** Rows of a key straight from the database: status, error code, cost, usage source, endpoint. */
  const rowsOf = (keyId: string) =>
    readDatabase(gw.dbPath, (db) => db.prepare('SELECT request_id, status, error_code, cost, usage_source, endpoint, input_tokens, output_tokens FROM usage_records WHERE key_id = ? ORDER BY rowid').all(keyId)) as Json[];

  test('responses.create: the text answer, usage.cost the exact price of the usage, and the key charged exactly that', async () => {
    const key = await gw.createKey({ name: 'text' });
    const response = await sdk(key.key).responses.create({ model: 'gpt-resp', input: 'Say hello.', instructions: 'Be brief.' });
    assertMatchesSchema('Response', response);
    assert.equal(response.output_text, RESPONSES_TEXT);
    const cost = usdToNano((response.usage as Json).cost);
    assert.equal(cost, price(response.usage!));
    const audit = gw.audit(key.id);
    assert.equal(audit.spent, cost);
    assert.deepEqual({ balance: audit.balance, held: audit.held, spent: audit.spent }, audit.derived);
    const [row] = rowsOf(key.id);
    assert.deepEqual([row.status, row.endpoint, row.usage_source, row.cost], [200, 'responses', 'upstream', cost]);
  });

  test('a stream: the events in order, one terminal response.completed with usage.cost; the sum of the deltas is the text', async () => {
    const key = await gw.createKey({ name: 'stream' });
    const stream = await sdk(key.key).responses.create({ model: 'gpt-resp', input: 'Say hello.', stream: true });
    const events: Json[] = [];
    for await (const event of stream) events.push(event);
    assert.equal(events[0].type, 'response.created');
    assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
    const text = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
    assert.equal(text, RESPONSES_TEXT);
    const terminal = events.at(-1);
    assert.equal(terminal.type, 'response.completed');
    assert.equal(events.filter((e) => e.type === 'response.completed').length, 1);
    const cost = usdToNano(terminal.response.usage.cost);
    assert.equal(cost, price(terminal.response.usage));
    assert.equal(gw.audit(key.id).spent, cost);
  });

  test('the responses.stream helper reads the same stream to its final response', async () => {
    const key = await gw.createKey({ name: 'helper' });
    const runner = sdk(key.key).responses.stream({ model: 'gpt-resp', input: 'Say hello.' });
    const final = await runner.finalResponse();
    assert.equal(final.output_text, RESPONSES_TEXT);
    assert.equal(usdToNano((final.usage as Json).cost), gw.audit(key.id).spent);
  });

  test('a function-call round trip: the call, then previous_response_id with its output — pinned to the same account, each turn charged its usage', async () => {
    const key = await gw.createKey({ name: 'tools' });
    const client = sdk(key.key);
    const first = await client.responses.create({ model: 'gpt-pair', input: 'Weather in Paris?', tools: [WEATHER_TOOL] });
    const call = first.output.find((item) => item.type === 'function_call');
    assert.ok(call && call.type === 'function_call');
    assert.equal(call.name, 'get_weather');
    assert.equal(call.arguments, TOOL_ARGUMENTS);
    const stream = await client.responses.create({
      model: 'gpt-pair',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '18 C and sunny' }],
      tools: [WEATHER_TOOL],
      stream: true,
    });
    let final: Json;
    for await (const event of stream) if (event.type === 'response.completed') final = event.response;
    assert.equal(final.output[0].content[0].text, toolResultText('18 C and sunny'));
    // The upstream counted the stored context in the continuation's input; the gateway charged that.
    assert.equal(final.usage.input_tokens, 31 + first.usage!.input_tokens + first.usage!.output_tokens);
    assert.equal(mock.requests.length, 2);
    assert.equal(mock.requests[1]!.headers.authorization, mock.requests[0]!.headers.authorization, 'the same upstream account');
    assert.equal(mock.requests[1]!.body.previous_response_id, first.id);
    assert.equal(gw.audit(key.id).spent, price(first.usage!) + price(final.usage));
  });

  test('the whole history sent back with store: false (as Codex does) works without any stored state', async () => {
    const key = await gw.createKey({ name: 'stateless' });
    const client = sdk(key.key);
    const first = await client.responses.create({ model: 'gpt-5-test', store: false, include: ['reasoning.encrypted_content'], input: 'Weather?', tools: [WEATHER_TOOL] });
    const reasoning = first.output.find((item) => item.type === 'reasoning') as Json;
    const call = first.output.find((item) => item.type === 'function_call') as Json;
    assert.match(reasoning.encrypted_content, /^gAAAAB/);
    const second = await client.responses.create({
      model: 'gpt-5-test',
      store: false,
      include: ['reasoning.encrypted_content'],
      tools: [WEATHER_TOOL],
      input: [{ role: 'user', content: 'Weather?' }, reasoning, call, { type: 'function_call_output', call_id: call.call_id, output: 'rain' }],
    });
    assert.equal(second.output_text, toolResultText('rain'));
    assert.equal(mock.requests[1]!.body.input[1].encrypted_content, reasoning.encrypted_content, 'encrypted reasoning sent back untouched');
  });

  test('response.incomplete and response.failed are billed from their usage', async () => {
    const key = await gw.createKey({ name: 'ends' });
    for (const terminal of ['incomplete', 'failed'] as const) {
      const usage = makeResponsesUsage(50 + terminal.length, 7);
      mock.handle((req) => responsesStreamReply(req.body, { terminal, usage }));
      const events: Json[] = [];
      for await (const event of await sdk(key.key).responses.create({ model: 'gpt-resp', input: 'Hi', stream: true })) events.push(event);
      const last = events.at(-1);
      assert.equal(last.type, `response.${terminal}`);
      assert.equal(usdToNano(last.response.usage.cost), price(usage));
    }
    const rows = rowsOf(key.id);
    assert.deepEqual(rows.map((r) => [r.usage_source, r.cost]), [['upstream', price(makeResponsesUsage(60, 7))], ['upstream', price(makeResponsesUsage(56, 7))]]);
  });

  test('a stream cut mid-way is estimated from the output delivered: above zero, within the hold', async () => {
    const key = await gw.createKey({ name: 'cut' });
    const body = { model: 'gpt-resp', input: 'Hi', stream: true as const };
    const quote = await fetch(`${gw.baseURL}/responses`, { method: 'POST', headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json', 'x-tollgate-dry-run': '1' }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<Json>);
    mock.handle((req) => ({ ...responsesStreamReply(req.body), cutAfter: 7 }));
    const events: Json[] = [];
    for await (const event of await sdk(key.key).responses.create(body)) events.push(event);
    assert.equal(events.at(-1).type, 'response.failed');
    // The dry run left its own row (usage_source none); the stream's is the last.
    const row = rowsOf(key.id).at(-1);
    assert.equal(row.usage_source, 'estimated');
    assert.ok(row.output_tokens > 0);
    assert.ok(row.cost > 0 && row.cost <= usdToNano(quote.hold), `estimated ${row.cost}, hold ${quote.hold}`);
    assert.equal(gw.audit(key.id).spent, row.cost);
  });

  test('a balance that cannot cover the hold: RateLimitError 429 insufficient_quota, not retried by the SDK, nothing charged', async () => {
    const key = await gw.createKey({ name: 'broke', balance: '0.000001' });
    await assert.rejects(sdk(key.key, 2).responses.create({ model: 'gpt-resp', input: 'Hi' }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.RateLimitError, `a RateLimitError: ${String(error)}`);
      assert.equal(error.status, 429);
      assert.equal(error.code, 'insufficient_quota');
      assert.equal(error.type, 'insufficient_quota');
      return true;
    });
    // Each attempt would leave its own row: one row, so one attempt (x-should-retry: false).
    await waitForRows(() => rowsOf(key.id), 1);
    assert.deepEqual(rowsOf(key.id).map((r) => [r.status, r.error_code, r.cost]), [[429, 'insufficient_balance', 0]]);
    assert.equal(mock.requests.length, 0);
  });

  test('a spent budget: RateLimitError 429 usage_limit_reached (code budget_exceeded), not retried', async () => {
    const key = await gw.createKey({ name: 'budgeted' });
    const set = await gw.cli(['keys', 'set-limits', key.id, '--budget', '0.000001', '--budget-period', 'day']);
    assert.equal(set.code, 0, set.stderr);
    await assert.rejects(sdk(key.key, 2).responses.create({ model: 'gpt-resp', input: 'Hi' }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.RateLimitError);
      assert.equal(error.code, 'budget_exceeded');
      assert.equal(error.type, 'usage_limit_reached');
      assert.equal(typeof (error.error as Json).resets_at, 'number');
      return true;
    });
    await waitForRows(() => rowsOf(key.id), 1);
    assert.equal(rowsOf(key.id).length, 1, 'one attempt');
  });

  test('an unknown previous_response_id is NotFoundError 404 previous_response_not_found, with no upstream call', async () => {
    const key = await gw.createKey({ name: 'unknown' });
    await assert.rejects(sdk(key.key).responses.create({ model: 'gpt-resp', input: 'Hi', previous_response_id: 'resp_nope' }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.NotFoundError);
      assert.equal(error.code, 'previous_response_not_found');
      return true;
    });
    assert.equal(mock.requests.length, 0);
  });

  test('an upstream 400 in a native cell is the SDK BadRequestError with the upstream words; a background request is refused before it', async () => {
    const key = await gw.createKey({ name: 'refused' });
    mock.handle({ status: 400, json: { error: { message: "Unsupported value: 'temperature' does not support 0.2 with this model.", type: 'invalid_request_error', param: 'temperature', code: 'unsupported_value' } } });
    await assert.rejects(sdk(key.key).responses.create({ model: 'gpt-resp', input: 'Hi', temperature: 0.2 }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError);
      assert.equal(error.code, 'unsupported_value');
      assert.match(error.message, /does not support 0\.2/);
      return true;
    });
    mock.reset();
    await assert.rejects(sdk(key.key).responses.create({ model: 'gpt-resp', input: 'Hi', background: true }), (error: unknown) => error instanceof OpenAI.BadRequestError && error.code === 'unsupported_parameter');
    assert.equal(mock.requests.length, 0);
  });

  test('input_tokens.count answers the upstream count and charges nothing', async () => {
    const key = await gw.createKey({ name: 'count' });
    const counted = await sdk(key.key).responses.inputTokens.count({ model: 'gpt-resp', input: 'Hi' });
    assert.deepEqual(counted, { object: 'response.input_tokens', input_tokens: mock.inputTokensAnswer });
    const audit = gw.audit(key.id);
    assert.deepEqual([audit.spent, audit.held, audit.activeHolds], [0, 0, 0]);
  });
});

async function waitForRows(read: () => unknown[], count: number): Promise<void> {
  for (let i = 0; i < 200 && read().length < count; i++) await new Promise((resolve) => setTimeout(resolve, 10));
}
