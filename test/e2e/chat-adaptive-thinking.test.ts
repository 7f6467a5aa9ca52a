// Chat completions → Anthropic on Claude ≥ 4.6 (ADR 0046): the real openai SDK sends reasoning_effort to a
// model whose upstream is claude-opus-4-7; the mock Anthropic answers 400 to `thinking.type: "enabled"`
// with budget_tokens for 4.7+ as the API does, so the request only succeeds when the gateway asks for
// `thinking: {type: "adaptive"}` + `output_config.effort`. Whole and streamed answers read the thinking
// block back (reasoning_content, thinking_blocks with its signature), a second tool-loop turn echoes it,
// and each request is charged exactly the usage the mock reported, at the model's prices.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { costOf, extendConfig, sdk, startE2E, stopE2E, type E2E, type Json } from '../support/e2e.js';
import { mockConfig } from '../support/gateway-process.js';
import { assertLedgerSettled } from '../support/ledger-check.js';
import { ANTHROPIC_MOCK_KEY, ANTHROPIC_TEXT, ANTHROPIC_THINKING, anthropicUsageFor, signatureFor, startMockAnthropic, type MockAnthropic } from '../support/mock-anthropic.js';
import { toolResultText } from '../support/mock-upstream.js';

/** USD per 1M tokens, as configured below; the cost is computed here in nano-dollars (× 1000 per token). */
const PRICE = { input: 5, output: 25 };
const WEATHER_TOOL = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } },
};

describe('chat → Anthropic: reasoning_effort on claude-opus-4-7 is adaptive thinking + effort', () => {
  let e: E2E;
  let anthropic: MockAnthropic;
  let client: OpenAI;
  let keyId: string;

  before(async () => {
    anthropic = await startMockAnthropic();
    e = await startE2E((mock) =>
      extendConfig(mockConfig(mock), {
        providers: `  anthropic-mock: { kind: anthropic, base_url: ${anthropic.url}, api_key: ${ANTHROPIC_MOCK_KEY} }`,
        models: `  opus-47:
    upstreams: [{ provider: anthropic-mock, model: claude-opus-4-7 }]
    price: { input: ${PRICE.input}, output: ${PRICE.output} }
    max_output_tokens: 8000
  sonnet-45:
    upstreams: [{ provider: anthropic-mock, model: claude-sonnet-4-5-20250929 }]
    price: { input: ${PRICE.input}, output: ${PRICE.output} }
    max_output_tokens: 8000`,
      }),
    );
    const key = await e.gw.createKey({ name: 'adaptive', balance: 5 });
    keyId = key.id;
    client = sdk(e.gw, key.key);
  });

  after(async () => {
    await anthropic?.close();
    await stopE2E(e);
  });

  /** The last /v1/messages body the mock received. */
  const lastSent = (): Json => anthropic.requests.filter((r) => r.path === '/v1/messages').at(-1)!.body;

  /** The cost of the mock's usage for a body, priced here: (input + cache writes) × input + output × output. */
  const priceOf = (body: Json): number => {
    const u = anthropicUsageFor(body);
    return (u.input_tokens + u.cache_creation_input_tokens) * PRICE.input * 1000 + u.output_tokens * PRICE.output * 1000;
  };

  async function ask(stream: boolean, params: Json): Promise<{ message: Json; usage: Json; finish: string }> {
    if (!stream) {
      const completion = (await client.chat.completions.create({ ...params, stream: false })) as Json;
      return { message: completion.choices[0].message, usage: completion.usage, finish: completion.choices[0].finish_reason };
    }
    const chunks: Json[] = [];
    const streamed: ChatCompletionCreateParamsStreaming = { ...params, stream: true, stream_options: { include_usage: true } };
    for await (const chunk of await client.chat.completions.create(streamed)) chunks.push(chunk);
    const deltas = chunks.flatMap((c) => c.choices.map((choice: Json) => choice.delta));
    const toolCalls: Json[] = [];
    for (const d of deltas) for (const call of d.tool_calls ?? []) {
      const slot = (toolCalls[call.index] ??= { id: call.id, type: 'function', function: { name: call.function?.name, arguments: '' } });
      slot.function.arguments += call.function?.arguments ?? '';
    }
    const message: Json = {
      role: 'assistant',
      content: deltas.map((d) => d.content ?? '').join('') || null,
      reasoning_content: deltas.map((d) => d.reasoning_content ?? '').join(''),
      thinking_blocks: deltas.flatMap((d) => d.thinking_blocks ?? []),
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    };
    const finish = chunks.flatMap((c) => c.choices.map((choice: Json) => choice.finish_reason)).find((f) => f) as string;
    return { message, usage: chunks.at(-1).usage, finish };
  }

  for (const stream of [false, true]) {
    const how = stream ? 'streamed' : 'whole';
    test(`${how}: the mock gets adaptive thinking + effort (never budget_tokens); the thinking block comes back; charged the mock's usage`, async () => {
      const before = e.gw.audit(keyId).spent;
      const { message, usage, finish } = await ask(stream, { model: 'opus-47', reasoning_effort: 'medium', messages: [{ role: 'user', content: 'Say hello, thoughtfully' }] });
      const sent = lastSent();
      assert.deepEqual(sent.thinking, { type: 'adaptive', display: 'summarized' });
      assert.deepEqual(sent.output_config, { effort: 'medium' });
      assert.ok(!JSON.stringify(sent).includes('budget_tokens'));
      assert.equal(message.content, ANTHROPIC_TEXT);
      assert.equal(message.reasoning_content, ANTHROPIC_THINKING);
      assert.deepEqual(message.thinking_blocks, [{ type: 'thinking', thinking: ANTHROPIC_THINKING, signature: signatureFor(ANTHROPIC_THINKING) }]);
      assert.equal(finish, 'stop');
      assert.equal(costOf(usage), priceOf(sent));
      assert.equal(assertLedgerSettled(e.gw, keyId).spent - before, priceOf(sent), 'the ledger charged exactly that');
    });

    test(`${how}: a tool loop over two turns: effort low, the echoed thinking block leads the assistant turn, the answer follows`, async () => {
      const question = [{ role: 'user', content: 'Weather in Paris?' }];
      const params = { model: 'opus-47', reasoning_effort: 'low', tools: [WEATHER_TOOL] };
      const turn1 = await ask(stream, { ...params, messages: question });
      assert.equal(turn1.finish, 'tool_calls');
      assert.deepEqual(lastSent().output_config, { effort: 'low' });
      const call = turn1.message.tool_calls[0];
      const turn2 = await ask(stream, { ...params, messages: [...question, turn1.message, { role: 'tool', tool_call_id: call.id, content: '{"temp_c":21}' }] });
      const sent = lastSent();
      assert.deepEqual(sent.thinking, { type: 'adaptive', display: 'summarized' });
      assert.equal(sent.messages[1].content[0].type, 'thinking', 'the echoed thinking block first (the mock checks its signature)');
      assert.equal(turn2.message.content, toolResultText('{"temp_c":21}'));
      assert.equal(costOf(turn2.usage), priceOf(sent));
    });
  }

  test('an older model keeps the token budget (the mock accepts it there)', async () => {
    await client.chat.completions.create({ model: 'sonnet-45', reasoning_effort: 'low', messages: [{ role: 'user', content: 'Hi' }] });
    assert.deepEqual(lastSent().thinking, { type: 'enabled', budget_tokens: 1024 });
    assert.equal(lastSent().output_config, undefined);
  });

  test('the mock refuses budget_tokens on claude-opus-4-7, as Anthropic does (what the old mapping would have met)', async () => {
    const res = await fetch(`${anthropic.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': ANTHROPIC_MOCK_KEY, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-opus-4-7', max_tokens: 8000, thinking: { type: 'enabled', budget_tokens: 4096 }, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    assert.equal(res.status, 400);
    assert.match(((await res.json()) as Json).error.message, /thinking\.type\.enabled" is not supported/);
  });

  test('the ledger adds up after all of it', () => {
    assertLedgerSettled(e.gw, keyId);
  });
});
