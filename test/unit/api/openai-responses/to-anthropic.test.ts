// The translated cell Responses → Anthropic (src/api/openai-responses/to-anthropic/): the request an
// Anthropic upstream gets (system, turns, tool ids both ways, tools, max_tokens, adaptive thinking and
// effort for Claude ≥ 4.6 vs a budget for older Claude, structured output, prompt cache), the reasoning
// envelope (sign, verify, tamper, foreign key; restored byte-for-byte before the turn's tool_use), a recorded
// Anthropic stream split at every byte giving the same Responses events with the thinking sealed, a whole
// answer's usage in the Responses convention (cache reads and writes inside input_tokens), and the recorded
// Codex body.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { envelopeKey, openThinking, sealThinking } from '../../../../src/api/openai-responses/to-anthropic/envelope.js';
import { anthropicAnswer, anthropicRequest, anthropicStream } from '../../../../src/api/openai-responses/to-anthropic/index.js';
import { countResponsesHold, countResponsesInput } from '../../../../src/api/openai-responses/count-input.js';
import { openaiResponses } from '../../../../src/api/openai-responses/index.js';
import { responsesCellFor } from '../../../../src/api/openai-responses/to-chat/index.js';
import type { ResponsesBody } from '../../../../src/api/openai-responses/validate.js';
import { GatewayError } from '../../../../src/errors.js';
import type { Charge } from '../../../../src/pipeline/admission/reservation.js';
import { takesAdaptiveThinking } from '../../../../src/providers/anthropic/adaptive-thinking.js';
import { frameDecoder } from '../../../../src/providers/framing/index.js';
import { adapterFor } from '../../../../src/providers/registry.js';
import type { Candidate } from '../../../../src/routing/resolve-route.js';
import type { UsageRecord } from '../../../../src/storage/types.js';
import { everyOffset } from '../../../contract/replay.js';
import { testAnthropicProvider, testCompatibleProvider } from '../../../support/provider-fixture.js';
import type { ModelConfig } from '../../../../src/config/types.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- request and event bodies are arbitrary JSON
type Json = any;

const PROVIDER = testAnthropicProvider();
function candidate(upstreamModel = 'claude-opus-4-7', provider = PROVIDER): Candidate {
  return { provider, adapter: adapterFor(provider.kind), weight: 1, target: { provider, upstreamModel, clientModel: 'claude', maxOutputTokens: 32_000 } };
}
const FN = { type: 'function', name: 'shell', description: 'Run a command.', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } };
const upstream = (body: Record<string, unknown>, model?: string): Json => JSON.parse(anthropicRequest({ model: 'claude', ...body } as ResponsesBody, candidate(model)).body as string);
const KEY = envelopeKey(PROVIDER);
const THINKING = { type: 'thinking', thinking: 'Let me list the files.\n  "quoted" ü', signature: 'EvQBCkYICxgCKkAx+/=' };

describe('responses → anthropic: the request', () => {
  test('Anthropic providers are the to-anthropic cell; an envelope in the history binds the request to it', () => {
    assert.equal(responsesCellFor(candidate()), 'to-anthropic');
    const body = (encrypted: string) => ({ model: 'm', input: [{ type: 'reasoning', summary: [], encrypted_content: encrypted }] }) as ResponsesBody;
    assert.equal(openaiResponses.historyCell!(body(sealThinking(KEY, [THINKING]))), 'to-anthropic');
    assert.equal(openaiResponses.historyCell!(body('gAAAAB...')), 'native');
  });

  test('instructions and system/developer items → system; messages → turns; max_tokens the model’s when absent', () => {
    const out = upstream({
      instructions: 'Be brief.',
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Dev' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello' }] },
        { type: 'message', role: 'user', content: 'Again' },
      ],
    });
    assert.deepEqual(out.system, [{ type: 'text', text: 'Be brief.\n\nDev' }]);
    assert.deepEqual(
      out.messages.map((m: Json) => [m.role, m.content.map((b: Json) => b.text).join('')]),
      [
        ['user', 'Hi'],
        ['assistant', 'Hello'],
        ['user', 'Again'],
      ],
    );
    assert.equal(out.max_tokens, 32_000);
    assert.equal(out.model, 'claude-opus-4-7');
    assert.equal(upstream({ input: 'x', max_output_tokens: 500 }).max_tokens, 500);
  });

  test('function_call / function_call_output ↔ tool_use / tool_result, ids Anthropic accepts mapped the same way both times', () => {
    const out = upstream({
      tools: [FN, { type: 'web_search' }],
      parallel_tool_calls: false,
      input: [
        { type: 'message', role: 'user', content: 'ls' },
        { type: 'function_call', call_id: 'toolu_01Abc', name: 'shell', arguments: '{"cmd":"ls"}' },
        { type: 'function_call', call_id: 'functions.shell:1', name: 'shell', arguments: '{"cmd":"pwd"}' },
        { type: 'function_call_output', call_id: 'toolu_01Abc', output: 'a.txt' },
        { type: 'function_call_output', call_id: 'functions.shell:1', output: '/tmp' },
      ],
    });
    const uses = out.messages[1].content;
    assert.deepEqual(
      uses.map((b: Json) => [b.type, b.name, b.input]),
      [
        ['tool_use', 'shell', { cmd: 'ls' }],
        ['tool_use', 'shell', { cmd: 'pwd' }],
      ],
    );
    assert.equal(uses[0].id, 'toolu_01Abc');
    assert.match(uses[1].id, /^[a-zA-Z0-9_-]+$/);
    assert.deepEqual(
      out.messages[2].content.map((b: Json) => b.tool_use_id),
      uses.map((b: Json) => b.id),
    );
    assert.deepEqual(
      out.tools.map((t: Json) => t.name),
      ['shell'],
      'web_search dropped',
    );
    assert.equal(out.tool_choice.disable_parallel_tool_use, true);
  });

  test('reasoning effort: adaptive thinking + output_config.effort for claude-opus-4-7 and sonnet-4-6, a budget for sonnet-4-5', () => {
    for (const model of ['claude-opus-4-7', 'claude-sonnet-4-6', 'claude-sonnet-4-6-20260101']) {
      const out = upstream({ input: 'Hi', reasoning: { effort: 'high', summary: 'auto' }, temperature: 0.5 }, model);
      assert.deepEqual(out.thinking, { type: 'adaptive', display: 'summarized' }, model);
      assert.deepEqual(out.output_config, { effort: 'high' }, model);
      assert.equal(out.temperature, undefined);
      assert.equal(JSON.stringify(out).includes('budget_tokens'), false);
    }
    const old = upstream({ input: 'Hi', reasoning: { effort: 'medium' } }, 'claude-sonnet-4-5-20250929');
    assert.equal(old.thinking.type, 'enabled');
    assert.ok(old.thinking.budget_tokens >= 1024 && old.thinking.budget_tokens < old.max_tokens);
    assert.equal(old.output_config, undefined);
    assert.equal(upstream({ input: 'Hi' }).thinking, undefined, 'no effort, no thinking');
    assert.equal(upstream({ input: 'Hi', reasoning: { effort: 'none' } }).thinking, undefined);
    // The chat path's mapping (ADR 0046): the highest effort every adaptive model accepts is `high`.
    for (const [effort, sent] of [['minimal', 'low'], ['xhigh', 'high'], ['max', 'high']]) {
      assert.deepEqual(upstream({ input: 'Hi', reasoning: { effort } }, 'claude-opus-4-7').output_config, { effort: sent }, effort);
    }
    assert.deepEqual(
      ['claude-opus-4-7', 'claude-sonnet-4-6', 'claude-opus-4-20250514', 'claude-sonnet-4-5-20250929', 'claude-3-7-sonnet-20250219', 'claude-opus-5'].map(takesAdaptiveThinking),
      [true, true, false, false, false, true],
    );
  });

  test('text.format json_schema → output_config.format; prompt_cache_key → a top-level cache_control', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    const out = upstream({ input: 'Hi', text: { format: { type: 'json_schema', name: 'x', schema } }, prompt_cache_key: 'session-1' });
    assert.deepEqual(out.output_config, { format: { type: 'json_schema', schema } });
    assert.deepEqual(out.cache_control, { type: 'ephemeral' });
    assert.equal(out.tools, undefined);
    assert.equal(upstream({ input: 'Hi' }).cache_control, undefined);
  });

  test('previous_response_id and item_reference: 400 telling the client to send the full history', () => {
    for (const body of [{ previous_response_id: 'resp_1', input: 'Hi' }, { input: [{ type: 'item_reference', id: 'msg_1' }] }]) {
      assert.throws(
        () => upstream(body),
        (error: unknown) => error instanceof GatewayError && error.code === 'unsupported_parameter' && /full history/.test(error.message),
      );
    }
  });

  test('the recorded Codex 0.171 body translates: functions and the namespace flattened, web_search dropped, cached', () => {
    const codex = JSON.parse(readFileSync(new URL('../../../fixtures/agents/codex-0.171.0-turn1.json', import.meta.url), 'utf8'));
    const request = anthropicRequest(codex as ResponsesBody, candidate('claude-sonnet-4-6'));
    const out = JSON.parse(request.body as string);
    assert.ok(out.tools.length >= 8);
    assert.ok(out.tools.every((t: Json) => typeof t.name === 'string' && t.input_schema));
    assert.ok(out.system.length > 0);
    assert.equal(out.messages[0].role, 'user');
    assert.deepEqual(out.cache_control, { type: 'ephemeral' });
    assert.equal(out.max_tokens, 32_000);
    assert.equal(out.stream, true);
    assert.ok(request.dropped?.some((d) => d.includes('web_search')));
  });
});

describe('responses → anthropic: the hold', () => {
  test('prompt_cache_key on a route reaching Anthropic: the whole prompt held at the cache-write price; else plain input', async () => {
    const body = { model: 'claude', input: 'Say hello to the whole world.', prompt_cache_key: 's1' };
    const tokens = await countResponsesInput(body);
    const route = (c: Candidate) => ({ model: {} as ModelConfig, candidates: [c] });
    assert.deepEqual(await countResponsesHold(body, undefined, route(candidate())), { tokens, cacheWrite: { tokens, oneHour: false } });
    assert.equal(await countResponsesHold({ ...body, prompt_cache_key: undefined }, undefined, route(candidate())), tokens);
    const compatible = testCompatibleProvider();
    const chatOnly: Candidate = { provider: compatible, adapter: adapterFor(compatible.kind), weight: 1, target: { provider: compatible, upstreamModel: 'up', clientModel: 'm', maxOutputTokens: 100 } };
    assert.equal(await countResponsesHold(body, undefined, route(chatOnly)), tokens, 'a chat upstream writes no cache the gateway could price');
  });
});

describe('responses → anthropic: the reasoning envelope', () => {
  test('sealed blocks open byte-for-byte; a tampered payload or mac, another provider’s key, garbage: undefined', () => {
    const blocks = [THINKING, { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' }];
    const sealed = sealThinking(KEY, blocks);
    assert.deepEqual(openThinking(KEY, sealed), blocks);
    assert.deepEqual(openThinking(envelopeKey(PROVIDER), sealed), blocks, 'the same config: the same key (restarts, workers)');
    const [prefix, payload, mac] = sealed.split('.');
    const forged = Buffer.from(JSON.stringify([{ ...THINKING, thinking: 'Something else' }])).toString('base64url');
    assert.equal(openThinking(KEY, `${prefix}.${forged}.${mac}`), undefined);
    assert.equal(openThinking(KEY, `${prefix}.${payload}.${mac!.slice(0, -2)}AA`), undefined);
    assert.equal(openThinking(envelopeKey({ id: 'anthropic-other', apiKey: 'sk-ant-test' }), sealed), undefined);
    assert.equal(openThinking(envelopeKey({ id: PROVIDER.id, apiKey: 'sk-ant-other' }), sealed), undefined);
    assert.equal(openThinking(KEY, 'gAAAAB-openai-encrypted'), undefined);
    assert.equal(openThinking(KEY, 'tgrs1.x'), undefined);
  });

  test('a genuine envelope is restored as the original block before the turn’s tool_use; a tampered one is dropped (thinking then stays off)', () => {
    const history = (encrypted: string) => [
      { type: 'message', role: 'user', content: 'ls' },
      { type: 'reasoning', summary: [{ type: 'summary_text', text: THINKING.thinking }], encrypted_content: encrypted },
      { type: 'function_call', call_id: 'toolu_01Abc', name: 'shell', arguments: '{"cmd":"ls"}' },
      { type: 'function_call_output', call_id: 'toolu_01Abc', output: 'a.txt' },
    ];
    const sealed = sealThinking(KEY, [THINKING]);
    const out = upstream({ tools: [FN], reasoning: { effort: 'medium' }, input: history(sealed) });
    assert.deepEqual(out.messages[1].content[0], THINKING);
    assert.equal(out.messages[1].content[1].type, 'tool_use');
    assert.deepEqual(out.thinking, { type: 'adaptive', display: 'summarized' });
    const tampered = sealed.slice(0, 10) + (sealed[10] === 'A' ? 'B' : 'A') + sealed.slice(11);
    const dropped = upstream({ tools: [FN], reasoning: { effort: 'medium' }, input: history(tampered) });
    assert.deepEqual(
      dropped.messages[1].content.map((b: Json) => b.type),
      ['tool_use'],
    );
    assert.equal(dropped.thinking, undefined);
    assert.equal(JSON.stringify(dropped).includes(THINKING.signature), false);
  });
});

const charge = (cost: number, usage: Json): Charge => ({ settlement: { kind: 'exact', tokens: usage.tokens, status: 200 }, cost, record: {} as UsageRecord });

function parse(wire: string): Json[] {
  return wire
    .split('\n\n')
    .filter(Boolean)
    .map((frame) => {
      const [name, data] = frame.split('\n');
      const json = JSON.parse(data!.slice('data: '.length));
      assert.equal(name, `event: ${json.type}`);
      return json;
    });
}

const THINKING_STREAM = readFileSync(new URL('../../../fixtures/upstream/anthropic-raw/anthropic-clear-thinking.1.reframed.sse', import.meta.url));
const BODY = { model: 'claude', input: 'Hi', stream: true, reasoning: { effort: 'medium', summary: 'auto' } } as ResponsesBody;

function replay(bytes: Buffer, splitAt: readonly number[] = []) {
  const decoder = frameDecoder('sse');
  const stream = anthropicStream(BODY, candidate('claude-sonnet-4-5-20250929'), 'req_1');
  let wire = '';
  let start = 0;
  for (const offset of [...splitAt, bytes.length]) {
    for (const event of decoder.push(bytes.subarray(start, offset))) wire += stream.push(event);
    start = offset;
  }
  for (const event of decoder.end()) wire += stream.push(event);
  return { stream, wire: wire.replace(/"created_at":\d+/g, '"created_at":0') };
}

describe('responses → anthropic: a recorded stream', () => {
  test('thinking → a reasoning item (summary, sealed envelope), then the message; numbered from 0; one terminal event with usage and cost', () => {
    const { stream, wire } = replay(THINKING_STREAM);
    const events = parse(wire + stream.final(charge(1_234_000, stream.usage)));
    assert.deepEqual(
      events.map((e) => e.sequence_number),
      events.map((_, i) => i),
    );
    const terminal = events.at(-1);
    assert.equal(terminal.type, 'response.completed');
    assert.equal(events.filter((e) => /^response\.(completed|incomplete|failed)$/.test(e.type)).length, 1);
    const done = events.filter((e) => e.type === 'response.output_item.done').map((e) => e.item);
    assert.deepEqual(done, terminal.response.output);
    const [reasoning, message] = done;
    assert.equal(reasoning.type, 'reasoning');
    assert.match(reasoning.summary[0].text, /^The previous result was 925\./);
    const [block] = openThinking(KEY, reasoning.encrypted_content)!;
    assert.equal(block!.thinking, reasoning.summary[0].text);
    assert.match(String(block!.signature), /^EvQBCkYICxgCKkAxhD4N/);
    assert.equal(message.type, 'message');
    assert.equal(terminal.response.usage.input_tokens, 69);
    assert.equal(terminal.response.usage.output_tokens, 53);
    assert.equal(terminal.response.usage.cost, 0.001234);
  });

  test('the same bytes split at every offset give the same events', () => {
    const whole = replay(THINKING_STREAM).wire;
    for (const offset of everyOffset(THINKING_STREAM.length)) assert.equal(replay(THINKING_STREAM, [offset]).wire, whole, `split at ${offset}`);
    assert.equal(replay(THINKING_STREAM, everyOffset(THINKING_STREAM.length)).wire, whole, 'one byte at a time');
  });
});

describe('responses → anthropic: a whole answer', () => {
  test('usage in the Responses convention: input_tokens includes cache reads and writes, cached_tokens the reads; a tool call with its id', () => {
    const message = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-opus-4-7',
      content: [THINKING, { type: 'text', text: 'Listing.' }, { type: 'tool_use', id: 'toolu_01X', name: 'shell', input: { cmd: 'ls' } }],
      stop_reason: 'tool_use',
      usage: { input_tokens: 10, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200, cache_creation: { ephemeral_5m_input_tokens: 150, ephemeral_1h_input_tokens: 50 }, output_tokens: 40 },
    };
    const answer = anthropicAnswer(message, { model: 'claude', input: 'ls', tools: [FN] } as ResponsesBody, candidate(), 'req_9');
    const body: Json = answer.body;
    assert.equal(body.id, 'resp_req_9');
    assert.deepEqual(
      body.output.map((item: Json) => item.type),
      ['reasoning', 'message', 'function_call'],
    );
    assert.deepEqual(openThinking(KEY, body.output[0].encrypted_content), [THINKING]);
    assert.equal(body.output[2].call_id, 'toolu_01X');
    assert.equal(body.usage.input_tokens, 1210);
    assert.equal(body.usage.input_tokens_details.cached_tokens, 1000);
    assert.equal(body.usage.output_tokens, 40);
    const tokens = answer.usage!.tokens;
    assert.deepEqual([tokens.input, tokens.cachedInput, tokens.cacheWrite, tokens.cacheWrite1h], [1210, 1000, 200, 50]);
  });
});
