// Claude Code on a chat-only model, end to end (product.md §14 "Translated", docs/adr/0043): the official
// @anthropic-ai/sdk against a real `tollgate serve` whose model's upstream speaks only chat completions (the
// OpenAI-compatible mock, an Azure deployment on it). Create and stream in Messages shapes; the request the
// upstream received, translated; a tool_use → tool_result round trip with ids mapped both ways; thinking from
// reasoning_content, dropped on the next turn; stop reasons; usage in Anthropic's convention with cached
// tokens billed once; no cache write held; a cut stream estimated; an upstream 400 in the Messages envelope;
// a Gemini model refused; fallback that never leaves a native cell for signed thinking; the gateway's own
// thinking kept from a native upstream; and Claude Code's recorded first turn, accepted and billed.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Anthropic, { APIError, BadRequestError } from '@anthropic-ai/sdk';
import { assertLedgerSettled, holdOf, usageRows } from '../support/ledger-check.js';
import { startE2E, stopE2E, waitFor, type E2E, type Json } from '../support/e2e.js';
import type { CreatedKey } from '../support/gateway-process.js';
import { anthropicError, signatureFor, startMockAnthropic, type MockAnthropic } from '../support/mock-anthropic.js';
import { CACHE_WRITE_PRICE, GPT_MAX_OUTPUT, messagesChatConfig } from '../support/messages-chat-config.js';
import { chatChunks, chatCompletion, cutAfter, DEFAULT_TEXT, errorReply, makeUsage, sseFromChunks, TOOL_ARGUMENTS, toolResultText, type ChunksSpec, type MockHandler } from '../support/mock-upstream.js';
import { chatCostNano, TEST_PRICES, usdToNano } from '../support/money.js';

const WEATHER_TOOL = { name: 'get_weather', description: 'Current weather for a city', input_schema: { type: 'object' as const, properties: { location: { type: 'string' } }, required: ['location'] } };
const HELLO = [{ role: 'user' as const, content: 'Say hello.' }];

/** A mock reply in the shape the request asked for (a stream or a whole completion), from one spec. */
const replying =
  (spec: ChunksSpec & { extraChoice?: Json }): MockHandler =>
  (req) => {
    const { extraChoice, ...rest } = spec;
    if (req.body.stream === true) {
      const chunks = chatChunks(rest).map((chunk: Json) => (extraChoice && chunk.choices[0]?.finish_reason ? { ...chunk, choices: [{ ...chunk.choices[0], ...extraChoice }] } : chunk));
      return sseFromChunks(chunks);
    }
    const completion: Json = chatCompletion({ ...rest, content: Array.isArray(rest.content) ? rest.content.join('') : rest.content, reasoningContent: Array.isArray(rest.reasoningContent) ? rest.reasoningContent.join('') : rest.reasoningContent });
    if (extraChoice) completion.choices[0] = { ...completion.choices[0], ...extraChoice };
    return { json: completion };
  };

describe('Anthropic Messages on a chat-only upstream (the translated cell), with the official SDK', () => {
  let e: E2E;
  let anthropic: MockAnthropic;
  let key: CreatedKey;

  const sdk = (maxRetries = 0) => new Anthropic({ apiKey: key.key, authToken: null, baseURL: e.gw.origin, maxRetries, timeout: 20_000 });
  /** Both ways of asking: create, and stream(...).finalMessage(). */
  const both = async (params: Anthropic.MessageCreateParamsNonStreaming) => [await sdk().messages.create(params), await sdk().messages.stream(params).finalMessage()];
  /**
   * The usage a client reads, with its cost: the message's, or the final message_delta's (the SDK's
   * accumulated message keeps Anthropic's counters only).
   */
  const usagesOf = async (params: Anthropic.MessageCreateParamsNonStreaming): Promise<Json[]> => {
    const whole = await sdk().messages.create(params);
    const stream = sdk().messages.stream(params);
    let delta: Json;
    for await (const event of stream) if (event.type === 'message_delta') delta = event.usage;
    const final = await stream.finalMessage();
    for (const name of ['input_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens', 'output_tokens']) assert.equal((final.usage as Json)[name], delta[name], name);
    return [whole.usage, delta];
  };
  const lastChat = (): Json => e.mock.requests.at(-1)!.body;

  before(async () => {
    anthropic = await startMockAnthropic();
    e = await startE2E((mock) => messagesChatConfig(mock, anthropic));
    key = await e.gw.createKey({ name: 'claude-code-on-gpt', balance: 5 });
  });
  after(async () => {
    await anthropic?.close();
    await stopE2E(e);
  });
  beforeEach(() => {
    e.mock.reset();
    anthropic.reset();
  });

  test('create and stream answer in Messages shapes, the upstream got a chat request, charged its canonical price', async () => {
    const ask = { model: 'gpt-test', max_tokens: 5000, system: 'Be brief.', messages: HELLO };
    for (const message of await both(ask)) {
      assert.equal(message.type, 'message');
      assert.equal(message.role, 'assistant');
      assert.equal(message.model, 'gpt-test');
      assert.match(message.id, /^msg_/);
      assert.deepEqual(message.content, [{ type: 'text', text: DEFAULT_TEXT }]);
      assert.equal(message.stop_reason, 'end_turn');
    }
    for (const usage of await usagesOf(ask)) {
      // The mock: prompt_tokens = 10 + messages (system + user), completion 7.
      assert.deepEqual([usage.input_tokens, usage.cache_read_input_tokens, usage.cache_creation_input_tokens, usage.output_tokens], [12, 0, 0, 7]);
      assert.equal(usdToNano(usage.cost), chatCostNano(12, 7));
    }
    const [whole, streamed] = e.mock.requests.map((r) => r.body);
    assert.equal(e.mock.requests[0]!.path, '/v1/chat/completions');
    assert.deepEqual(whole.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Say hello.' },
    ]);
    assert.equal(whole.model, 'gpt-4o-mini');
    assert.equal(whole.max_tokens, GPT_MAX_OUTPUT, "never above the model's max_output_tokens");
    assert.deepEqual([streamed.stream, streamed.stream_options], [true, { include_usage: true }]);
    const rows = await usageRows(e.gw, key.id);
    assert.equal(rows.length, 4);
    for (const row of rows as Json[]) {
      assert.deepEqual([row.status, row.usage_source, row.endpoint, row.provider, row.input_tokens, row.output_tokens], [200, 'upstream', 'messages', 'mock', 12, 7]);
      assert.equal(usdToNano(row.cost), chatCostNano(12, 7));
    }
    assertLedgerSettled(e.gw, key.id);
  });

  test('an Azure deployment gets its own chat request: the deployment path, api-version, max_completion_tokens', async () => {
    const message = await sdk().messages.create({ model: 'gpt-azure', max_tokens: 300, messages: HELLO });
    assert.deepEqual(message.content, [{ type: 'text', text: DEFAULT_TEXT }]);
    const received = e.mock.requests.at(-1)!;
    assert.match(received.url, /^\/openai\/deployments\/gpt-4o-mini\/chat\/completions\?api-version=/);
    assert.equal(received.headers['api-key'], 'azure-mock-key');
    assert.deepEqual([received.body.max_completion_tokens, received.body.max_tokens], [300, undefined]);
  });

  test('a tool_use → tool_result round trip, created and streamed, the tool id the same at every step', async () => {
    for (const streamed of [false, true]) {
      const ask = { model: 'gpt-test', max_tokens: 300, tools: [WEATHER_TOOL], messages: [{ role: 'user' as const, content: 'Weather in Paris?' }] };
      const first = streamed ? await sdk().messages.stream(ask).finalMessage() : await sdk().messages.create(ask);
      assert.equal(first.stop_reason, 'tool_use');
      const call = first.content.find((block) => block.type === 'tool_use');
      assert.ok(call?.type === 'tool_use');
      assert.deepEqual([call.id, call.name, call.input], ['call_mock_1', 'get_weather', JSON.parse(TOOL_ARGUMENTS)]);
      assert.deepEqual(lastChat().tools, [{ type: 'function', function: { name: 'get_weather', description: WEATHER_TOOL.description, parameters: WEATHER_TOOL.input_schema } }]);
      const next = { ...ask, messages: [...ask.messages, { role: 'assistant' as const, content: first.content }, { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: call.id, content: 'Sunny, 24 °C' }] }] };
      const answer = streamed ? await sdk().messages.stream(next).finalMessage() : await sdk().messages.create(next);
      assert.deepEqual(answer.content, [{ type: 'text', text: toolResultText('Sunny, 24 °C') }]);
      const sent = lastChat().messages;
      assert.deepEqual(sent.at(-2).tool_calls, [{ id: 'call_mock_1', type: 'function', function: { name: 'get_weather', arguments: TOOL_ARGUMENTS } }]);
      assert.deepEqual(sent.at(-1), { role: 'tool', tool_call_id: 'call_mock_1', content: 'Sunny, 24 °C' });
    }
  });

  test('tool ids the other API rejects are mapped, deterministically, there and back', async () => {
    // A chat id Anthropic's clients reject (Kimi's style) becomes toolu_tg + a hash...
    e.mock.handle(replying({ toolCalls: [{ id: 'functions.get_weather:0', name: 'get_weather', arguments: TOOL_ARGUMENTS }] }));
    const ask = { model: 'gpt-test', max_tokens: 300, tools: [WEATHER_TOOL], messages: [{ role: 'user' as const, content: 'Weather?' }] };
    const [whole, streamed] = await both(ask);
    const ids = [whole!, streamed!].map((m) => m.content.find((b) => b.type === 'tool_use')!).map((b) => (b.type === 'tool_use' ? b.id : ''));
    assert.match(ids[0]!, /^toolu_tg[A-Za-z0-9_-]{24}$/);
    assert.equal(ids[1], ids[0], 'the same id, created or streamed');
    e.mock.handle(null);
    // ...which chat accepts: the next turn sends it unchanged, in the call and in its result. An Anthropic id
    // chat rejects (over 40 characters) becomes call_ + a hash, the same in both places.
    const long = `toolu_${'a'.repeat(48)}`;
    await sdk().messages.create({
      ...ask,
      messages: [
        ...ask.messages,
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: ids[0]!, name: 'get_weather', input: { location: 'Paris' } },
            { type: 'tool_use', id: long, name: 'get_weather', input: { location: 'Oslo' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: ids[0]!, content: 'Sunny' },
            { type: 'tool_result', tool_use_id: long, content: 'Snow' },
          ],
        },
      ],
    });
    const sent = lastChat().messages;
    const mapped = `call_${createHash('sha256').update(long).digest('base64url').slice(0, 24)}`;
    assert.deepEqual(
      sent.at(-3).tool_calls.map((c: Json) => c.id),
      [ids[0], mapped],
    );
    assert.deepEqual(
      sent.slice(-2).map((m: Json) => m.tool_call_id),
      [ids[0], mapped],
    );
  });

  test('reasoning_content comes back as a thinking block with a Tollgate mark; the next turn drops it, and Anthropic-signed thinking too', async () => {
    e.mock.handle(replying({ reasoningContent: 'The user greets me. I greet back.', content: 'Hello!' }));
    const ask = { model: 'gpt-test', max_tokens: 300, thinking: { type: 'enabled' as const, budget_tokens: 1024 }, messages: HELLO };
    const answers = await both(ask);
    for (const message of answers) {
      const [thinking, text] = message.content;
      assert.ok(thinking?.type === 'thinking');
      assert.equal(thinking.thinking, 'The user greets me. I greet back.');
      assert.equal(thinking.signature, `tollgate.v1.${createHash('sha256').update(thinking.thinking).digest('base64url')}`);
      assert.deepEqual(text, { type: 'text', text: 'Hello!' });
    }
    assert.equal(lastChat().reasoning_effort, 'low', 'a 1,024-token budget asks for low effort');
    e.mock.handle(null);
    const first = answers[1]!;
    const signed = { type: 'thinking' as const, thinking: 'Claude thought.', signature: signatureFor('Claude thought.') };
    await sdk().messages.create({
      ...ask,
      messages: [...HELLO, { role: 'assistant', content: first.content }, { role: 'user', content: 'Again.' }, { role: 'assistant', content: [signed, { type: 'text', text: 'Hi again.' }] }, { role: 'user', content: 'Bye.' }],
    });
    const sent = lastChat().messages;
    assert.deepEqual(
      sent.filter((m: Json) => m.role === 'assistant'),
      [
        { role: 'assistant', content: 'Hello!' },
        { role: 'assistant', content: 'Hi again.' },
      ],
    );
    assert.ok(!/thought|signature|greets|reasoning/.test(JSON.stringify(sent)));
  });

  test('stop reasons: length → max_tokens, content_filter → refusal, a stop sequence the upstream names → stop_sequence', async () => {
    const cases: Array<[ChunksSpec & { extraChoice?: Json }, string, string | null]> = [
      [{ content: 'Hello wor', finishReason: 'length' }, 'max_tokens', null],
      [{ content: '', finishReason: 'content_filter' }, 'refusal', null],
      [{ content: 'Counting: one two', extraChoice: { stop_reason: 'three' } }, 'stop_sequence', 'three'],
    ];
    for (const [spec, reason, sequence] of cases) {
      e.mock.handle(replying(spec));
      for (const message of await both({ model: 'gpt-test', max_tokens: 100, stop_sequences: ['three'], messages: HELLO })) {
        assert.deepEqual([message.stop_reason, message.stop_sequence], [reason, sequence]);
      }
      assert.deepEqual(lastChat().stop, ['three']);
    }
  });

  test("usage in Anthropic's convention: input without the cached tokens, which are billed once at cached_input", async () => {
    e.mock.handle(replying({ content: 'Cached hello.', usage: makeUsage(1000, 20, { cached: 600 }) }));
    // Computed apart from the gateway: 400 × $1 + 600 × $0.50 + 20 × $2, per 1M tokens.
    const expected = Math.ceil(400 * TEST_PRICES.input * 1000 + 600 * TEST_PRICES.cachedInput * 1000 + 20 * TEST_PRICES.output * 1000);
    assert.equal(expected, chatCostNano(1000, 20, 600));
    for (const usage of await usagesOf({ model: 'gpt-test', max_tokens: 100, messages: HELLO })) {
      assert.deepEqual([usage.input_tokens, usage.cache_read_input_tokens, usage.cache_creation_input_tokens, usage.output_tokens], [400, 600, 0, 20]);
      assert.equal(usdToNano(usage.cost), expected);
    }
    // The rows keep the canonical counts (input with its cached part), charged the same once each.
    const rows = (await usageRows(e.gw, key.id)).filter((r) => r.cached_input_tokens === 600) as Json[];
    assert.equal(rows.length, 2);
    for (const row of rows) assert.deepEqual([row.input_tokens, row.cached_input_tokens, row.output_tokens, usdToNano(row.cost)], [1000, 600, 20, expected]);
  });

  test('cache_control is dropped, and no cache write is held: chat completions write none', async () => {
    const system = [{ type: 'text' as const, text: 'Repository rules. '.repeat(1000), cache_control: { type: 'ephemeral' as const } }];
    const { response } = await sdk().messages.create({ model: 'gpt-cache-write', max_tokens: 100, system, messages: HELLO }).withResponse();
    assert.ok(!JSON.stringify(lastChat()).includes('cache_control'));
    const hold = holdOf(e.gw, response.headers.get('x-request-id')!)!.amount;
    // The prompt is ~3,000 tokens: at the cache-write price alone its hold would pass 3,000 × $10 per 1M.
    assert.ok(hold < 3000 * CACHE_WRITE_PRICE * 1000, `hold ${hold}`);
  });

  test('a stream the upstream cuts ends with an error event and is charged an estimate: more than zero, within its hold', async () => {
    // The role chunk and three words of text, then the connection drops.
    e.mock.handle(cutAfter(4));
    const stream = sdk().messages.stream({ model: 'gpt-test', max_tokens: 500, messages: HELLO });
    const requestId = await stream.withResponse().then(({ response }) => response.headers.get('x-request-id')!);
    await assert.rejects(stream.finalMessage(), (error: unknown) => error instanceof APIError && /api_error|upstream/.test(String(error.message)));
    const row: Json = await waitFor(async () => (await usageRows(e.gw, key.id)).find((r) => r.request_id === requestId));
    const cost = usdToNano(row.cost);
    assert.equal(row.usage_source, 'estimated');
    assert.ok(row.input_tokens > 0 && row.output_tokens > 0);
    assert.ok(cost > 0 && cost <= holdOf(e.gw, requestId)!.amount, `0 < ${cost} <= hold`);
    assertLedgerSettled(e.gw, key.id);
  });

  test("an upstream 400 is a Messages invalid_request_error with the upstream's message, not its JSON; nothing charged", async () => {
    const wording = "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.";
    e.mock.handle(errorReply(400, wording, { param: 'messages', code: 'context_length_exceeded' }));
    const error = await sdk()
      .messages.create({ model: 'gpt-test', max_tokens: 100, messages: HELLO })
      .then(
        () => assert.fail('served'),
        (thrown: unknown) => thrown,
      );
    assert.ok(error instanceof BadRequestError, String(error));
    const body = error.error as Json;
    assert.deepEqual([body.type, body.error.type, body.error.message], ['error', 'invalid_request_error', wording]);
    const row: Json = (await usageRows(e.gw, key.id)).find((r) => r.request_id === body.request_id);
    assert.deepEqual([row.status, usdToNano(row.cost)], [400, 0]);
  });

  test("a server tool is a 400 naming it, saying the model's upstream cannot run it", async () => {
    const error = await sdk()
      .messages.create({ model: 'gpt-test', max_tokens: 100, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: HELLO })
      .then(
        () => assert.fail('served'),
        (thrown: unknown) => thrown,
      );
    assert.ok(error instanceof BadRequestError);
    assert.match((error.error as Json).error.message, /web_search_20250305.*chat completions and cannot run it/);
    assert.equal(e.mock.requests.length, 0);
  });

  test('a model on a Gemini provider is still 400 model_not_supported_on_endpoint, before any upstream call', async () => {
    const error = await sdk()
      .messages.create({ model: 'gemini-test', max_tokens: 100, messages: HELLO })
      .then(
        () => assert.fail('served'),
        (thrown: unknown) => thrown,
      );
    assert.ok(error instanceof BadRequestError);
    assert.match((error.error as Json).error.message, /not served on this endpoint; it is served on \/v1\/chat\/completions/);
    assert.equal(e.mock.requests.length + anthropic.requests.length, 0);
  });

  test('fallback from a native cell to a translated one, except when the history holds Anthropic-signed thinking', async () => {
    anthropic.handle(anthropicError(500, 'api_error', 'Internal server error'));
    const message = await sdk().messages.create({ model: 'claude-or-gpt', max_tokens: 100, messages: HELLO });
    assert.deepEqual(message.content, [{ type: 'text', text: DEFAULT_TEXT }], 'served by the translated cell');
    assert.equal(e.mock.requests.length, 1);
    const signed = { type: 'thinking' as const, thinking: 'Claude thought.', signature: signatureFor('Claude thought.') };
    const error = await sdk()
      .messages.create({ model: 'claude-or-gpt', max_tokens: 100, messages: [...HELLO, { role: 'assistant', content: [signed, { type: 'text', text: 'Hi.' }] }, { role: 'user', content: 'Again.' }] })
      .then(
        () => assert.fail('served'),
        (thrown: unknown) => thrown,
      );
    assert.ok(error instanceof APIError && error.status !== undefined && error.status >= 500, String(error));
    assert.equal(e.mock.requests.length, 1, 'no fallback to the chat upstream');
  });

  test("the gateway's own thinking never reaches a native upstream (which would refuse its signature)", async () => {
    e.mock.handle(replying({ reasoningContent: 'Mine.', content: 'Hi.' }));
    const translated = await sdk().messages.create({ model: 'gpt-test', max_tokens: 300, messages: HELLO });
    const message = await sdk().messages.create({ model: 'claude-test', max_tokens: 300, messages: [...HELLO, { role: 'assistant', content: translated.content }, { role: 'user', content: 'And now?' }] });
    assert.equal(message.content.at(-1)?.type, 'text');
    const forwarded = anthropic.requests.at(-1)!.body;
    assert.deepEqual(forwarded.messages[1].content, [{ type: 'text', text: 'Hi.' }]);
  });

  test("Claude Code's recorded first turn is accepted on a chat-only model, translated whole, and billed", async () => {
    const recorded = JSON.parse(readFileSync(new URL('../fixtures/agents/claude-code-2.1.197-turn1.json', import.meta.url), 'utf8')) as Json;
    const res = await fetch(`${e.gw.origin}/v1/messages?beta=true`, {
      method: 'POST',
      headers: {
        'x-api-key': key.key,
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27',
        'x-claude-code-session-id': 'cc-translated-1',
      },
      body: JSON.stringify({ ...recorded, model: 'gpt-test' }),
    });
    assert.equal(res.status, 200);
    const text = await res.text();
    const names = [...text.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
    assert.equal(names[0], 'message_start');
    assert.deepEqual(names.slice(-2), ['message_delta', 'message_stop']);
    assert.match(text, /"stop_reason":"tool_use"/, 'the mock calls the first tool');
    const sent = lastChat();
    assert.equal(sent.tools.length, recorded.tools.length);
    assert.deepEqual([sent.reasoning_effort, sent.max_tokens, sent.user.length], ['high', GPT_MAX_OUTPUT, 64]);
    assert.ok(!JSON.stringify(sent).includes('cache_control') && !JSON.stringify(sent).includes('session_id'));
    const requestId = res.headers.get('x-request-id')!;
    const row: Json = (await usageRows(e.gw, key.id)).find((r) => r.request_id === requestId);
    // The mock's usage: 10 + the messages it was sent (system + user), 7 out.
    assert.deepEqual([row.status, row.usage_source, row.endpoint, row.session_id, row.input_tokens, row.output_tokens], [200, 'upstream', 'messages', 'cc-translated-1', 12, 7]);
    assert.equal(usdToNano(row.cost), chatCostNano(12, 7));
    assertLedgerSettled(e.gw, key.id);
  });
});
