// The usage readers report how an answer was served — the price modifiers of product.md §14 — as the
// answer says it, never assumed: Anthropic's usage.speed, .inference_geo, .service_tier and
// .server_tool_use with the message's model; OpenAI's service_tier and model on the envelope. They reach
// the billing in `tokens.modifiers`; the client's usage object is untouched.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAnthropicChatResponse } from '../../../src/providers/anthropic/response.js';
import { AnthropicChatStreamTranslator } from '../../../src/providers/anthropic/stream.js';
import { mergeAnthropicModifiers } from '../../../src/providers/anthropic/usage.js';
import { parseOpenAIChatResponse } from '../../../src/providers/openai/response.js';
import { OpenAIChatStreamTranslator } from '../../../src/providers/openai/stream.js';
import type { JsonObject } from '../../../src/providers/types.js';
import type { ModifierReport } from '../../../src/providers/usage-report.js';
import { testAnthropicProvider, testCompatibleProvider, testTarget } from '../../support/provider-fixture.js';

const ANTHROPIC = testTarget({ provider: testAnthropicProvider(), upstreamModel: 'claude-opus-4-6', clientModel: 'opus', maxOutputTokens: 64_000 });
const OPENAI = testTarget();

const anthropicMessage = (usage: JsonObject, model = 'claude-opus-4-6'): JsonObject => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model,
  content: [{ type: 'text', text: 'Hi' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage,
});

describe('Anthropic', () => {
  test('a whole message: speed, geo, tier, server tool uses by tool name and the model that answered', () => {
    const parsed = parseAnthropicChatResponse(
      anthropicMessage({
        input_tokens: 10,
        output_tokens: 20,
        speed: 'fast',
        inference_geo: 'us',
        service_tier: 'priority',
        server_tool_use: { web_search_requests: 2, web_fetch_requests: 0 },
      }),
      ANTHROPIC,
    );
    assert.deepEqual(parsed.usage!.tokens.modifiers, { speed: 'fast', geo: 'us', tier: 'priority', serverToolUses: { web_search: 2 }, servedModel: 'claude-opus-4-6' });
    assert.equal(parsed.body.model, 'opus', 'the client still sees its own model id');
    assert.deepEqual(Object.keys(parsed.usage!.openai).sort(), ['completion_tokens', 'completion_tokens_details', 'prompt_tokens', 'prompt_tokens_details', 'total_tokens']);
  });

  test('a stream: message_start names the model, speed, geo and tier; message_delta the server tool uses', () => {
    const t = new AnthropicChatStreamTranslator(ANTHROPIC);
    const events = [
      { type: 'message_start', message: { id: 'm', type: 'message', role: 'assistant', model: 'claude-opus-4-6', content: [], usage: { input_tokens: 5, output_tokens: 1, speed: 'fast', inference_geo: 'global', service_tier: 'standard' } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 9, server_tool_use: { web_search_requests: 1 } } },
      { type: 'message_stop' },
    ];
    for (const event of events) t.onEvent({ event: event.type, data: JSON.stringify(event) });
    assert.deepEqual(t.usage!.tokens.modifiers, { speed: 'fast', geo: 'global', tier: 'standard', servedModel: 'claude-opus-4-6', serverToolUses: { web_search: 1 } });
  });

  test('a null or missing field is no report, and keeps what an earlier report said', () => {
    const holder: { modifiers?: ModifierReport } = {};
    mergeAnthropicModifiers(holder, { input_tokens: 1, speed: null, inference_geo: null, service_tier: null, server_tool_use: null });
    assert.equal(holder.modifiers, undefined, 'nothing reported, nothing made');
    mergeAnthropicModifiers(holder, { speed: 'fast' });
    mergeAnthropicModifiers(holder, { output_tokens: 3 });
    assert.deepEqual(holder.modifiers, { speed: 'fast' });
    mergeAnthropicModifiers(holder, { server_tool_use: { web_search_requests: -1, code_execution_requests: 1.5, web_fetch_requests: 3 } });
    assert.deepEqual(holder.modifiers, { speed: 'fast', serverToolUses: { web_fetch: 3 } }, 'only whole, positive counts');
  });

  test('an answer that reports none of them (a message without model, plain usage) carries no modifiers', () => {
    const json = anthropicMessage({ input_tokens: 10, output_tokens: 20 });
    delete json.model;
    assert.equal('modifiers' in parseAnthropicChatResponse(json, ANTHROPIC).usage!.tokens, false);
  });
});

describe('OpenAI-style', () => {
  const completion = (extra: JsonObject): JsonObject => ({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
    ...extra,
  });

  test('a completion: service_tier and the model that answered, read before the model is replaced by the client’s', () => {
    const parsed = parseOpenAIChatResponse(completion({ model: 'gpt-4o-mini-2024-07-18', service_tier: 'flex' }), OPENAI);
    assert.deepEqual(parsed.usage!.tokens.modifiers, { tier: 'flex', servedModel: 'gpt-4o-mini-2024-07-18' });
    assert.equal(parsed.body.model, 'client-model');
    assert.equal(parsed.body.service_tier, 'flex', 'the body goes to the client as it came');
  });

  test('a server that names neither reports no modifiers', () => {
    const parsed = parseOpenAIChatResponse(completion({}), testTarget({ provider: testCompatibleProvider() }));
    assert.equal('modifiers' in parsed.usage!.tokens, false);
  });

  test('a stream: the chunks’ service_tier and model, the last report winning; Azure’s empty prelude model is none', () => {
    const t = new OpenAIChatStreamTranslator(OPENAI);
    const chunk = (extra: JsonObject) => ({ data: JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, ...extra }), event: undefined });
    t.onEvent(chunk({ model: '', choices: [], prompt_filter_results: [] }));
    t.onEvent(chunk({ model: 'gpt-4o-2024-11-20', service_tier: 'default', choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }] }));
    t.onEvent(chunk({ model: 'gpt-4o-2024-11-20', service_tier: 'priority', choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }));
    t.onEvent({ data: '[DONE]', event: undefined });
    assert.deepEqual(t.usage!.tokens.modifiers, { tier: 'priority', servedModel: 'gpt-4o-2024-11-20' });
  });
});
