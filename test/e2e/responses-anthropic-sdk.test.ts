// POST /v1/responses in its translated cell to Anthropic (docs/adr/0045-responses-to-anthropic.md: Codex on
// Claude): a model routed to the mock Anthropic upstream (`claude-opus-4-7`: adaptive thinking), driven by the
// real `openai` SDK — responses.create and responses.stream().finalResponse(): the text from a Messages
// request, a function-call round trip with the tool ids mapped, thinking → a reasoning item whose
// encrypted_content is the Tollgate envelope → echoed on the next turn → the original block restored (the mock
// checks its signature byte-for-byte), a tampered envelope dropped, prompt_cache_key → a top-level
// cache_control with cache reads and writes billed once (the charge computed independently from Anthropic's
// usage), stored state refused without an upstream call, an upstream 400 as invalid_request with its words.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startE2E, stopE2E, extendConfig, type E2E, type Json } from '../support/e2e.js';
import type { CreatedKey } from '../support/gateway-process.js';
import { anthropicError, anthropicUsageFor, ANTHROPIC_TEXT, ANTHROPIC_THINKING, signatureFor, startMockAnthropic, type MockAnthropic } from '../support/mock-anthropic.js';
import { claudeCostNano, CLAUDE_PRICES, messagesConfig } from '../support/messages-config.js';
import { TOOL_ARGUMENTS, toolResultText } from '../support/mock-upstream.js';
import { usdToNano } from '../support/money.js';
import { assertMatchesSchema } from '../support/openapi.js';

/** claude-codex: upstream claude-opus-4-7 on the mock Anthropic, CLAUDE_PRICES, max_output_tokens 4000. */
const MODEL = 'claude-codex';
const SHELL = { type: 'function' as const, name: 'shell', description: 'Run a command.', strict: false, parameters: { type: 'object', properties: { cmd: { type: 'string' } } } };
const THINKING_BLOCK = { type: 'thinking', thinking: ANTHROPIC_THINKING, signature: signatureFor(ANTHROPIC_THINKING) };

describe('the Responses API translated to an Anthropic upstream, through the openai SDK', () => {
  let anthropic: MockAnthropic;
  let e: E2E;
  let key: CreatedKey;

  before(async () => {
    anthropic = await startMockAnthropic();
    e = await startE2E((mock) =>
      extendConfig(messagesConfig(mock, anthropic), {
        models: `  ${MODEL}:
    upstreams: [{ provider: anthropic-mock, model: claude-opus-4-7 }]
    price: { input: ${CLAUDE_PRICES.input}, output: ${CLAUDE_PRICES.output}, cached_input: ${CLAUDE_PRICES.cachedInput}, cache_write: ${CLAUDE_PRICES.cacheWrite}, cache_write_1h: ${CLAUDE_PRICES.cacheWrite1h} }
    max_output_tokens: 4000`,
      }),
    );
    key = await e.gw.createKey({ name: 'codex-on-claude', balance: 5 });
  });
  after(async () => {
    await anthropic?.close();
    await stopE2E(e);
  });
  beforeEach(() => anthropic.reset());

  const sdk = () => new OpenAI({ apiKey: key.key, baseURL: e.gw.baseURL, maxRetries: 0, timeout: 20_000 });
  /** What the key was charged for the n-th upstream request, from Anthropic's own usage (its convention). */
  const upstreamCost = (n: number) => claudeCostNano(anthropicUsageFor(anthropic.requests[n]!.body, anthropic.cache));
  const spent = () => e.gw.audit(key.id).spent;

  test('responses.create: a Response with the text, from a Messages request (system, max_tokens the model maximum), charged its usage', async () => {
    const before = spent();
    const response = await sdk().responses.create({ model: MODEL, input: 'Say hello.', instructions: 'Be brief.' });
    assertMatchesSchema('Response', response);
    assert.equal(response.output_text, ANTHROPIC_TEXT);
    assert.equal(response.status, 'completed');
    const [upstream] = anthropic.requests;
    assert.equal(upstream!.path, '/v1/messages');
    const body = upstream!.body as Json;
    assert.deepEqual(body.system, [{ type: 'text', text: 'Be brief.' }]);
    assert.deepEqual(body.messages, [{ role: 'user', content: [{ type: 'text', text: 'Say hello.' }] }]);
    assert.deepEqual([body.model, body.max_tokens, body.thinking, body.cache_control], ['claude-opus-4-7', 4000, undefined, undefined]);
    const cost = usdToNano((response.usage as Json).cost);
    assert.equal(cost, upstreamCost(0));
    assert.equal(spent() - before, cost);
  });

  test('stream().finalResponse() with a tool loop: thinking → reasoning envelope → echoed → the original block restored, call ids mapped both ways', async () => {
    const before = spent();
    const client = sdk();
    const runner = client.responses.stream({ model: MODEL, store: false, input: 'List the files.', tools: [SHELL], reasoning: { effort: 'high', summary: 'auto' }, include: ['reasoning.encrypted_content'] });
    const events: Json[] = [];
    runner.on('event', (event) => events.push(event));
    const first = await runner.finalResponse();
    assert.deepEqual(
      events.map((ev) => ev.sequence_number),
      events.map((_, i) => i),
    );
    assert.equal(events.filter((ev) => /^response\.(completed|incomplete|failed)$/.test(ev.type)).length, 1);
    assert.equal(events.at(-1).type, 'response.completed');
    const upstream1 = anthropic.requests[0]!.body as Json;
    assert.deepEqual([upstream1.thinking, upstream1.output_config], [{ type: 'adaptive', display: 'summarized' }, { effort: 'high' }]);
    assert.deepEqual(
      first.output.map((item) => item.type),
      ['reasoning', 'message', 'function_call'],
    );
    const done = events.filter((ev) => ev.type === 'response.output_item.done').map((ev) => ev.item);
    assert.deepEqual(done, events.at(-1).response.output, "every item's complete output_item.done, as the terminal response lists them");
    const reasoning = first.output[0] as Json;
    assert.match(reasoning.encrypted_content, /^tgrs1\./);
    assert.equal(reasoning.summary[0].text, ANTHROPIC_THINKING);
    const call = first.output[2] as Json;
    assert.equal(call.name, 'shell');
    assert.equal(call.arguments, TOOL_ARGUMENTS);
    assert.match(call.call_id, /^toolu_/);

    // Codex's next turn: the whole history, its reasoning items echoed.
    // (rebuilt from output_item.done, as Codex does: the items exactly as the gateway sent them)
    const history: Json[] = [{ role: 'user', content: 'List the files.' }, ...done, { type: 'function_call_output', call_id: call.call_id, output: 'a.txt b.txt' }];
    const second = await client.responses.stream({ model: MODEL, store: false, input: history, tools: [SHELL], reasoning: { effort: 'high', summary: 'auto' } }).finalResponse();
    assert.equal(second.output_text, toolResultText('a.txt b.txt'));
    const messages = (anthropic.requests[1]!.body as Json).messages;
    assert.deepEqual(messages[1].content[0], THINKING_BLOCK, 'the original thinking block, byte-for-byte (the mock checked its signature)');
    assert.equal(messages[1].content.at(-1).type, 'tool_use');
    assert.equal(messages[1].content.at(-1).id, call.call_id);
    assert.deepEqual(messages[2].content[0], { type: 'tool_result', tool_use_id: call.call_id, content: 'a.txt b.txt' });
    assert.equal(spent() - before, usdToNano((first.usage as Json).cost) + usdToNano((second.usage as Json).cost));
    assert.equal(spent() - before, upstreamCost(0) + upstreamCost(1));
  });

  test('a tampered envelope is dropped, not forwarded: the turn goes without thinking', async () => {
    const client = sdk();
    const first = await client.responses.create({ model: MODEL, store: false, input: 'List the files.', tools: [SHELL], reasoning: { effort: 'low' } });
    const reasoning = first.output[0] as Json;
    const call = first.output.find((item) => item.type === 'function_call') as Json;
    const envelope: string = reasoning.encrypted_content;
    const tampered = envelope.slice(0, 12) + (envelope[12] === 'A' ? 'B' : 'A') + envelope.slice(13);
    const history: Json[] = [{ role: 'user', content: 'List the files.' }, { ...reasoning, encrypted_content: tampered }, call, { type: 'function_call_output', call_id: call.call_id, output: 'x' }];
    const second = await client.responses.create({ model: MODEL, store: false, input: history, tools: [SHELL], reasoning: { effort: 'low' } });
    assert.equal(second.status, 'completed');
    const upstream = anthropic.requests[1]!.body as Json;
    assert.deepEqual(
      upstream.messages[1].content.map((b: Json) => b.type),
      ['tool_use'],
    );
    assert.equal(upstream.thinking, undefined);
    assert.equal(JSON.stringify(upstream).includes(signatureFor(ANTHROPIC_THINKING)), false);
  });

  test('prompt_cache_key → a top-level cache_control; cache reads and writes in input_tokens, cached_tokens the reads, billed once', async () => {
    const before = spent();
    anthropic.cache = { read: 1200, creation: 300, creation1h: 100 };
    const response = await sdk().responses.stream({ model: MODEL, input: 'Say hello.', prompt_cache_key: 'codex-session-1' }).finalResponse();
    const body = anthropic.requests[0]!.body as Json;
    assert.deepEqual(body.cache_control, { type: 'ephemeral' });
    const raw = anthropicUsageFor(body, anthropic.cache);
    const usage = response.usage as Json;
    assert.equal(usage.input_tokens, raw.input_tokens + 1200 + 300);
    assert.equal(usage.input_tokens_details.cached_tokens, 1200);
    assert.equal(usage.output_tokens, raw.output_tokens);
    const cost = usdToNano(usage.cost);
    assert.equal(cost, claudeCostNano(raw));
    assert.equal(spent() - before, cost);
  });

  test('previous_response_id: 400 unsupported_parameter without an upstream call; an upstream 400: invalid_request with its words', async () => {
    await assert.rejects(sdk().responses.create({ model: MODEL, input: 'Hi', previous_response_id: 'resp_1' }), (error: Json) => error.status === 400 && error.code === 'unsupported_parameter' && /full history/.test(error.message));
    assert.equal(anthropic.requests.length, 0);
    anthropic.handle(anthropicError(400, 'invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum'));
    await assert.rejects(sdk().responses.create({ model: MODEL, input: 'Hi' }), (error: Json) => error.status === 400 && error.code === 'invalid_request' && /prompt is too long/.test(error.message));
  });
});
