// End to end: non-streaming chat completions through the real gateway process with the openai SDK,
// against the scripted mock upstream. Every answer is schema-checked and every charge is proven exact
// three ways: usage.cost in the body, the ledger in the database, and `tollgate usage --json`.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import type { CreatedKey } from '../support/gateway-process.js';
import { DEFAULT_TEXT, JSON_MODE_TEXT, TOOL_ARGUMENTS, chatCompletion, makeUsage } from '../support/mock-upstream.js';
import { assertMatchesSchema } from '../support/openapi.js';
import { costOf, startE2EWithKey, stopE2E, type E2E } from '../support/e2e.js';
import { assertLedgerSettled, holdOf, UsageExpectations, type ExpectedRow, type UsageRow } from '../support/ledger-check.js';
import { chatCostNano } from '../support/money.js';

const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};

describe('chat completions (non-stream)', () => {
  let e: E2E;
  let key: CreatedKey;
  let client: OpenAI;

  before(async () => {
    ({ e, key, client } = await startE2EWithKey({ name: 'chat', balance: 10 }));
  });
  after(() => stopE2E(e));
  beforeEach(() => e.mock.reset());

  /** Sends one completion and checks schema, model id, request id, usage.cost and the ledger delta. */
  async function complete(params: ChatCompletionCreateParamsNonStreaming, expectedCost: number): Promise<{ completion: ChatCompletion; requestId: string }> {
    const before = e.gw.audit(key.id);
    const { data: completion, response } = await client.chat.completions.create(params).withResponse();
    assertMatchesSchema('CreateChatCompletionResponse', completion);
    assert.equal(completion.model, params.model, 'the response names the client’s model id');
    const requestId = response.headers.get('x-request-id');
    assert.ok(requestId, 'x-request-id header');
    assert.equal(costOf(completion.usage), expectedCost, 'usage.cost is the exact price of the upstream usage');
    const after = assertLedgerSettled(e.gw, key.id);
    assert.equal(after.spent - before.spent, expectedCost, 'ledger spent moved by the charge');
    assert.equal(before.balance - after.balance, expectedCost, 'balance moved by the charge');
    assert.equal(after.captures - before.captures, 1, 'one capture');
    assert.equal(after.usageRows - before.usageRows, 1, 'one usage row');
    return { completion, requestId };
  }

  /** Usage rows are checked at the end of the file, with one `tollgate usage --json` run. */
  const expectedRows = new UsageExpectations();
  function checkRow(exp: Omit<ExpectedRow, 'keyId'>, extra?: (row: UsageRow) => void): void {
    expectedRows.add({ keyId: key.id, ...exp }, extra);
  }

  test('returns the upstream completion with usage and usage.cost under the client’s model id', async () => {
    const messages = [
      { role: 'system' as const, content: 'Be brief.' },
      { role: 'user' as const, content: 'Say hello' },
    ];
    const cost = chatCostNano(12, 7);
    const { completion, requestId } = await complete({ model: 'gpt-test', messages }, cost);
    assert.equal(completion.object, 'chat.completion');
    assert.equal(completion.choices[0]!.message.content, DEFAULT_TEXT);
    assert.equal(completion.choices[0]!.finish_reason, 'stop');
    assert.equal(completion.usage!.prompt_tokens, 12);
    assert.equal(completion.usage!.completion_tokens, 7);
    assert.equal(completion.usage!.total_tokens, 19);
    checkRow({ requestId, model: 'gpt-test', upstreamModel: 'gpt-4o-mini', input: 12, output: 7, costNano: cost });
  });

  test('forwards the client body to the upstream with only model replaced, unknown fields included', async () => {
    const body = {
      model: 'gpt-test',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      temperature: 0.3,
      top_p: 0.9,
      seed: 42,
      user: 'user-1234',
      metadata: { trace: 'abc' },
      stop: ['\n\n'],
      logit_bias: { '50256': -100 },
      foo: { bar: 1 },
    };
    const { requestId } = await complete(body as unknown as ChatCompletionCreateParamsNonStreaming, chatCostNano(11, 7));
    assert.equal(e.mock.requests.length, 1, 'one upstream call');
    const received = e.mock.requests[0]!;
    assert.equal(received.method, 'POST');
    assert.equal(received.path, '/v1/chat/completions');
    assert.deepEqual(received.body, { ...body, model: 'gpt-4o-mini' });
    assert.equal(received.headers.authorization, 'Bearer sk-mock-upstream-secret', 'the provider’s key goes upstream');
    assert.ok(!JSON.stringify(received.headers).includes(key.key), 'the client’s Tollgate key never goes upstream');
    checkRow({ requestId, model: 'gpt-test', upstreamModel: 'gpt-4o-mini', input: 11, output: 7, costNano: chatCostNano(11, 7) });
  });

  test('a tool call comes back with its id, name and arguments, and the next turn is forwarded unchanged', async () => {
    const messages = [{ role: 'user' as const, content: 'Weather in Paris?' }];
    const { completion, requestId } = await complete({ model: 'gpt-test', messages, tools: [WEATHER_TOOL], tool_choice: 'auto' }, chatCostNano(11, 7));
    const choice = completion.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, null);
    const calls = choice.message.tool_calls!;
    assert.equal(calls.length, 1);
    const call = calls[0]!;
    assert.equal(call.type, 'function');
    assert.equal(call.id, 'call_mock_1');
    assert.ok(call.type === 'function');
    assert.equal(call.function.name, 'get_weather');
    assert.equal(call.function.arguments, TOOL_ARGUMENTS);
    assert.deepEqual(JSON.parse(call.function.arguments), { location: 'Paris' });
    assert.deepEqual(e.mock.requests[0]!.body.tools, [WEATHER_TOOL]);
    checkRow({ requestId, model: 'gpt-test', upstreamModel: 'gpt-4o-mini', input: 11, output: 7, costNano: chatCostNano(11, 7) });

    // The second turn: the assistant message with the call and the tool result go back unchanged.
    const turn2 = [...messages, choice.message, { role: 'tool' as const, tool_call_id: call.id, content: '{"temp_c":21}' }];
    const { completion: answer } = await complete({ model: 'gpt-test', messages: turn2, tools: [WEATHER_TOOL], tool_choice: 'none' }, chatCostNano(13, 7));
    assert.equal(answer.choices[0]!.message.content, DEFAULT_TEXT);
    assert.deepEqual(e.mock.requests[1]!.body.messages, JSON.parse(JSON.stringify(turn2)));
  });

  test('JSON mode with response_format json_object and json_schema yields content that parses as JSON', async () => {
    const messages = [{ role: 'user' as const, content: 'Answer in JSON' }];
    const formats = [
      { type: 'json_object' as const },
      {
        type: 'json_schema' as const,
        json_schema: { name: 'answer', strict: true, schema: { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'], additionalProperties: false } },
      },
    ];
    for (const [i, response_format] of formats.entries()) {
      const { completion } = await complete({ model: 'gpt-test', messages, response_format }, chatCostNano(11, 7));
      const content = completion.choices[0]!.message.content!;
      assert.equal(content, JSON_MODE_TEXT);
      assert.deepEqual(JSON.parse(content), { answer: 42 });
      assert.deepEqual(e.mock.requests[i]!.body.response_format, response_format, 'response_format forwarded unchanged');
    }
  });

  test('a reasoning model reports reasoning_tokens and is charged for them as output tokens', async () => {
    const messages = [{ role: 'user' as const, content: 'Think, then answer' }];
    // completion_tokens 23 = 7 visible + 16 reasoning; all 23 are priced as output.
    const cost = chatCostNano(11, 23);
    const { completion, requestId } = await complete({ model: 'gpt-reasoning', messages, max_completion_tokens: 300 }, cost);
    assert.equal(completion.usage!.completion_tokens, 23);
    assert.equal(completion.usage!.completion_tokens_details?.reasoning_tokens, 16);
    const sent = e.mock.requests[0]!.body;
    assert.equal(sent.model, 'o3-mini-reasoning');
    assert.equal(sent.max_completion_tokens, 300, 'max_completion_tokens forwarded');
    assert.equal(sent.max_tokens, undefined, 'no max_tokens invented');
    checkRow({ requestId, model: 'gpt-reasoning', upstreamModel: 'o3-mini-reasoning', input: 11, output: 23, reasoning: 16, costNano: cost });
  });

  test('max_completion_tokens sizes the hold, wins over max_tokens, and is capped at the model’s max_output_tokens', async () => {
    const messages = [{ role: 'user' as const, content: 'Size my hold' }];
    const holdFor = async (extra: Partial<ChatCompletionCreateParamsNonStreaming>) => {
      const { requestId } = await complete({ model: 'gpt-test', messages, ...extra }, chatCostNano(11, 7));
      const hold = holdOf(e.gw, requestId);
      assert.ok(hold, 'a hold was placed');
      assert.equal(hold.status, 'captured');
      return hold.amount;
    };
    const atModelMax = await holdFor({});
    const at300 = await holdFor({ max_completion_tokens: 300 });
    const both = await holdFor({ max_tokens: 900, max_completion_tokens: 300 });
    const over = await holdFor({ max_completion_tokens: 5000 });
    const viaMaxTokens = await holdFor({ max_tokens: 300 });
    // output price 2 USD/1M = 2000 nano per token.
    assert.equal(atModelMax - at300, (1000 - 300) * 2000, 'max_completion_tokens 300 holds 700 fewer output tokens');
    assert.equal(both, at300, 'max_completion_tokens wins over max_tokens');
    assert.equal(over, atModelMax, 'never more than max_output_tokens');
    assert.equal(viaMaxTokens, at300, 'max_tokens sizes the hold when max_completion_tokens is absent');
    assert.equal(e.mock.requests[3]!.body.max_completion_tokens, 5000, 'the client’s value still goes upstream');
  });

  test('tool definitions count toward the hold as input tokens', async () => {
    const messages = [{ role: 'user' as const, content: 'Weather in Paris?' }];
    const plain = await complete({ model: 'gpt-test', messages, max_tokens: 100 }, chatCostNano(11, 7));
    const withTools = await complete({ model: 'gpt-test', messages, max_tokens: 100, tools: [WEATHER_TOOL], tool_choice: 'none' }, chatCostNano(11, 7));
    const extra = holdOf(e.gw, withTools.requestId)!.amount - holdOf(e.gw, plain.requestId)!.amount;
    // The tool JSON is well over 20 tokens at 1000 nano per input token.
    assert.ok(extra >= 20 * 1000, `the tool definitions added ${extra} nano to the hold`);
    assert.equal(extra % 1000, 0, 'whole input tokens');
  });

  test('cached prompt tokens are charged at the cached_input price', async () => {
    e.mock.handle({ json: chatCompletion({ usage: makeUsage(100, 10, { cached: 40 }) }) });
    // 60 uncached × 1000 + 40 cached × 500 + 10 output × 2000 nano.
    const cost = chatCostNano(100, 10, 40);
    assert.equal(cost, 100_000);
    const { completion, requestId } = await complete({ model: 'gpt-test', messages: [{ role: 'user', content: 'again' }] }, cost);
    assert.equal(completion.usage!.prompt_tokens_details?.cached_tokens, 40);
    checkRow({ requestId, model: 'gpt-test', upstreamModel: 'gpt-4o-mini', input: 100, cached: 40, output: 10, costNano: cost });
  });

  test('a completion without upstream usage is charged an estimate above zero and no more than the hold', async () => {
    e.mock.handle({ json: chatCompletion({ usage: null }) });
    const before = e.gw.audit(key.id);
    const { data: completion, response } = await client.chat.completions
      .create({ model: 'gpt-test', messages: [{ role: 'user', content: 'no usage please' }], max_tokens: 50 })
      .withResponse();
    assertMatchesSchema('CreateChatCompletionResponse', completion);
    const requestId = response.headers.get('x-request-id')!;
    const cost = costOf(completion.usage);
    const hold = holdOf(e.gw, requestId)!.amount;
    assert.ok(cost > 0 && cost <= hold, `0 < cost ${cost} <= hold ${hold}`);
    const after = assertLedgerSettled(e.gw, key.id);
    assert.equal(after.spent - before.spent, cost);
    checkRow({ requestId, model: 'gpt-test', upstreamModel: 'gpt-4o-mini', costNano: cost, source: 'estimated' });
  });

  test('every request left one usage row (tokens, cost, source, provider, attempts) and the rows add up to the ledger', async () => {
    await expectedRows.verify(e.gw, [key.id]);
  });
});
