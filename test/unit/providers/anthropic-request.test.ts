// OpenAI chat-completions bodies → Anthropic Messages API requests.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { ProviderConfig } from '../../../src/config/types.js';
import { GatewayError } from '../../../src/errors.js';
import { buildAnthropicChatRequest } from '../../../src/providers/anthropic/request.js';
import type { ChatRequestBody, UpstreamRequest, UpstreamTarget } from '../../../src/providers/types.js';
import { testAnthropicProvider } from '../../support/provider-fixture.js';

const provider = (overrides: Partial<ProviderConfig> = {}): ProviderConfig => testAnthropicProvider({ apiKey: 'sk-ant-provider-secret', ...overrides });

function target(maxOutputTokens: number | undefined = 64_000, p: ProviderConfig = provider()): UpstreamTarget {
  return { provider: p, upstreamModel: 'claude-sonnet-4-5', clientModel: 'claude-sonnet', maxOutputTokens };
}

function chatBody(extra: Record<string, unknown> = {}): ChatRequestBody {
  return { model: 'claude-sonnet', messages: [{ role: 'user', content: 'Hi' }], ...extra } as ChatRequestBody;
}

type Sent = Record<string, unknown> & { messages: { role: string; content: Record<string, unknown>[] }[] };

function build(extra: Record<string, unknown> = {}, t: UpstreamTarget = target()): { request: UpstreamRequest; sent: Sent } {
  const request = buildAnthropicChatRequest(chatBody(extra), t);
  return { request, sent: JSON.parse(request.body!) as Sent };
}

describe('buildAnthropicChatRequest: call, headers and limits', () => {
  test('posts to {base_path}/v1/messages with anthropic-version and no credential (the transport signs x-api-key)', () => {
    const { request, sent } = build();
    assert.equal(request.method, 'POST');
    assert.equal(request.path, '/v1/messages');
    assert.deepEqual(request.headers, {
      'content-type': 'application/json',
      accept: 'application/json',
      'anthropic-version': '2023-06-01',
    });
    assert.equal(sent.model, 'claude-sonnet-4-5');
    assert.deepEqual(sent.messages, [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]);
    assert.equal(sent.stream, undefined);
    assert.equal(request.dropped, undefined);
  });

  test('keeps a base path and asks for SSE with stream: true when the client streams', () => {
    const { request, sent } = build({ stream: true, stream_options: { include_usage: true } }, target(1000, provider({ basePath: '/proxy' })));
    assert.equal(request.path, '/proxy/v1/messages');
    assert.equal(request.headers.accept, 'text/event-stream');
    assert.equal(sent.stream, true);
    assert.equal(sent.stream_options, undefined);
    assert.deepEqual(request.dropped, ['stream_options']);
  });

  test('max_tokens is max_completion_tokens, else max_tokens, else the model limit', () => {
    assert.equal(build({ max_completion_tokens: 300, max_tokens: 200 }).sent.max_tokens, 300);
    assert.equal(build({ max_tokens: 200 }).sent.max_tokens, 200);
    assert.equal(build().sent.max_tokens, 64_000);
    assert.equal(build({}, { ...target(), maxOutputTokens: undefined }).sent.max_tokens, 4096, 'a fallback when the model has no limit configured');
  });

  test("does not modify the client's body object", () => {
    const body = chatBody({ reasoning_effort: 'low', temperature: 0.5, response_format: { type: 'json_object' } });
    const before = structuredClone(body);
    buildAnthropicChatRequest(body, target());
    assert.deepEqual(body, before);
  });
});

describe('buildAnthropicChatRequest: messages', () => {
  test('hoists system and developer messages, from anywhere, into system text blocks in order', () => {
    const { sent } = build({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
        { role: 'developer', content: [{ type: 'text', text: 'Use French.' }] },
        { role: 'user', content: 'Again' },
      ],
    });
    assert.deepEqual(sent.system, [
      { type: 'text', text: 'Be brief.' },
      { type: 'text', text: 'Use French.' },
    ]);
    assert.deepEqual(sent.messages, [{ role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'text', text: 'Again' }] }]);
  });

  test('merges consecutive turns of the same role so roles alternate', () => {
    const { sent } = build({
      messages: [
        { role: 'user', content: 'a' },
        { role: 'user', content: 'b' },
        { role: 'assistant', content: 'c' },
        { role: 'assistant', content: 'd' },
        { role: 'user', content: 'e' },
      ],
    });
    assert.deepEqual(
      sent.messages.map((m) => [m.role, m.content.map((b) => b.text).join('')]),
      [
        ['user', 'ab'],
        ['assistant', 'cd'],
        ['user', 'e'],
      ],
    );
  });

  test('turns tool calls into tool_use blocks and tool messages into one user turn of tool_result blocks', () => {
    const { sent } = build({
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'toolu_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18C' },
        { role: 'tool', tool_call_id: 'toolu_2', content: [{ type: 'text', text: '24C' }] },
        { role: 'user', content: 'Thanks' },
      ],
    });
    assert.deepEqual(sent.messages, [
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'Rome' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '18C' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: '24C' }] },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ]);
  });

  test('an assistant tool call without arguments gets an empty input object', () => {
    const { sent } = build({
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '' } }] },
        { role: 'tool', tool_call_id: 't', content: 'done' },
      ],
    });
    assert.deepEqual(sent.messages[1], { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] });
  });

  test('rejects tool-call arguments that are not a JSON object with invalid_request naming the param', () => {
    const body = chatBody({
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          tool_calls: [
            { id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } },
            { id: 'b', type: 'function', function: { name: 'f', arguments: '{not json' } },
          ],
        },
      ],
    });
    assert.throws(
      () => buildAnthropicChatRequest(body, target()),
      (error: unknown) =>
        error instanceof GatewayError && error.code === 'invalid_request' && error.param === 'messages[1].tool_calls[1].function.arguments',
    );
    const arrayArgs = chatBody({
      messages: [{ role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '[1]' } }] }],
    });
    assert.throws(() => buildAnthropicChatRequest(arrayArgs, target()), GatewayError);
  });

  test('maps data-URL and http images, and PDF files; drops other parts and lists them', () => {
    const { request, sent } = build({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } },
            { type: 'file', file: { filename: 'report.pdf', file_data: 'data:application/pdf;base64,JVBERi0x' } },
            { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
            { type: 'file', file: { file_id: 'file-123' } },
          ],
        },
      ],
    });
    assert.deepEqual(sent.messages[0]!.content, [
      { type: 'text', text: 'Look' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' }, title: 'report.pdf' },
    ]);
    assert.deepEqual(request.dropped, ['messages[].content[].input_audio', 'messages[].content[].file']);
  });

  test('puts echoed thinking_blocks first in the assistant turn, before text and tool_use', () => {
    const { sent } = build({
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: 'Let me check.',
          thinking_blocks: [
            { type: 'thinking', thinking: 'Need the tool.', signature: 'sig-1' },
            { type: 'redacted_thinking', data: 'opaque' },
          ],
          reasoning_content: 'Need the tool.',
          tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
      ],
      reasoning_effort: 'low',
      max_tokens: 4000,
    });
    assert.deepEqual(sent.messages[1]!.content, [
      { type: 'thinking', thinking: 'Need the tool.', signature: 'sig-1' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} },
    ]);
  });
});

describe('buildAnthropicChatRequest: tools', () => {
  const weather = { type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

  test('maps function tools to name/description/input_schema, defaulting the schema', () => {
    const { sent } = build({ tools: [weather, { type: 'function', function: { name: 'ping' } }] });
    assert.deepEqual(sent.tools, [
      { name: 'get_weather', description: 'Weather by city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
      { name: 'ping', input_schema: { type: 'object', properties: {} } },
    ]);
    assert.equal(sent.tool_choice, undefined);
  });

  test('maps tool_choice auto, none, required and a named function', () => {
    assert.deepEqual(build({ tools: [weather], tool_choice: 'auto' }).sent.tool_choice, { type: 'auto' });
    assert.deepEqual(build({ tools: [weather], tool_choice: 'none' }).sent.tool_choice, { type: 'none' });
    assert.deepEqual(build({ tools: [weather], tool_choice: 'required' }).sent.tool_choice, { type: 'any' });
    assert.deepEqual(build({ tools: [weather], tool_choice: { type: 'function', function: { name: 'get_weather' } } }).sent.tool_choice, {
      type: 'tool',
      name: 'get_weather',
    });
  });

  test('parallel_tool_calls false sets disable_parallel_tool_use, creating an auto choice if needed', () => {
    assert.deepEqual(build({ tools: [weather], parallel_tool_calls: false }).sent.tool_choice, { type: 'auto', disable_parallel_tool_use: true });
    assert.deepEqual(build({ tools: [weather], parallel_tool_calls: false, tool_choice: 'required' }).sent.tool_choice, {
      type: 'any',
      disable_parallel_tool_use: true,
    });
    assert.equal(build({ tools: [weather], parallel_tool_calls: true }).sent.tool_choice, undefined);
  });
});

describe('buildAnthropicChatRequest: sampling, stop, user', () => {
  test('forwards temperature and top_p, maps stop to stop_sequences and user to metadata.user_id', () => {
    const { sent } = build({ temperature: 0.3, top_p: 0.9, stop: 'END', user: 'user-42' });
    assert.equal(sent.temperature, 0.3);
    assert.equal(sent.top_p, 0.9);
    assert.deepEqual(sent.stop_sequences, ['END']);
    assert.deepEqual(sent.metadata, { user_id: 'user-42' });
    assert.deepEqual(build({ stop: ['a', 'b'] }).sent.stop_sequences, ['a', 'b']);
  });

  test("merges user into the client's metadata object, which wins on user_id", () => {
    assert.deepEqual(build({ user: 'u1', metadata: { user_id: 'native' } }).sent.metadata, { user_id: 'native' });
    assert.deepEqual(build({ safety_identifier: 'hashed', user: 'u1' }).sent.metadata, { user_id: 'hashed' });
  });

  test("keeps only user_id of an OpenAI-style metadata object, which Anthropic would reject, and logs the rest", () => {
    const withUser = build({ user: 'u1', metadata: { session: 's-9', tier: 'gold' } });
    assert.deepEqual(withUser.sent.metadata, { user_id: 'u1' });
    assert.deepEqual(withUser.request.dropped, ['metadata.session', 'metadata.tier']);
    const without = build({ metadata: { session: 's-9' } });
    assert.equal(without.sent.metadata, undefined);
    assert.deepEqual(without.request.dropped, ['metadata.session']);
    assert.deepEqual(build({ metadata: { user_id: 'native' } }).request.dropped, undefined);
  });
});

describe('buildAnthropicChatRequest: reasoning_effort', () => {
  test('maps low/medium/high to thinking budgets of 1024/4096/16384', () => {
    for (const [effort, budget] of [
      ['low', 1024],
      ['medium', 4096],
      ['high', 16384],
    ] as const) {
      assert.deepEqual(build({ reasoning_effort: effort, max_tokens: 32_000 }).sent.thinking, { type: 'enabled', budget_tokens: budget });
    }
  });

  test('caps the budget at max_tokens − 1 and leaves thinking off below 1025 output tokens', () => {
    assert.deepEqual(build({ reasoning_effort: 'high', max_tokens: 5000 }).sent.thinking, { type: 'enabled', budget_tokens: 4999 });
    assert.deepEqual(build({ reasoning_effort: 'low', max_tokens: 1025 }).sent.thinking, { type: 'enabled', budget_tokens: 1024 });
    assert.equal(build({ reasoning_effort: 'low', max_tokens: 1024 }).sent.thinking, undefined);
    assert.equal(build({ reasoning_effort: 'minimal' }).sent.thinking, undefined);
    assert.equal(build({ reasoning_effort: 'none' }).sent.thinking, undefined);
    assert.equal(build().sent.thinking, undefined);
  });

  test('drops temperature and top_k when the gateway turns thinking on, and lists them', () => {
    const on = build({ reasoning_effort: 'medium', temperature: 0.2, top_k: 5, max_tokens: 8000 });
    assert.equal(on.sent.temperature, undefined);
    assert.equal(on.sent.top_k, undefined);
    assert.deepEqual(on.request.dropped, ['temperature', 'top_k']);
    const off = build({ temperature: 0.2, top_k: 5 });
    assert.equal(off.sent.temperature, 0.2);
    assert.equal(off.sent.top_k, 5);
  });

  test('leaves thinking off when continuing a tool call whose assistant message has no thinking_blocks', () => {
    const loop = (assistant: Record<string, unknown>): Record<string, unknown> => ({
      reasoning_effort: 'low',
      max_tokens: 4000,
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'w', arguments: '{}' } }], ...assistant },
        { role: 'tool', tool_call_id: 't1', content: 'sunny' },
      ],
    });
    const without = build(loop({}));
    assert.equal(without.sent.thinking, undefined, 'Anthropic would reject thinking here');
    assert.deepEqual(without.request.dropped, ['reasoning_effort']);
    const echoed = build(loop({ thinking_blocks: [{ type: 'thinking', thinking: 'hm', signature: 's' }] }));
    assert.deepEqual(echoed.sent.thinking, { type: 'enabled', budget_tokens: 1024 });
  });

  test("a client's native thinking wins over reasoning_effort", () => {
    const { sent, request } = build({ reasoning_effort: 'high', thinking: { type: 'enabled', budget_tokens: 2000 }, temperature: 1 });
    assert.deepEqual(sent.thinking, { type: 'enabled', budget_tokens: 2000 });
    assert.equal(sent.temperature, 1, 'the client asked for both itself');
    assert.deepEqual(request.dropped, ['reasoning_effort']);
  });
});

describe('buildAnthropicChatRequest: reasoning_effort on Claude ≥ 4.6 (adaptive thinking, ADR 0046)', () => {
  const on = (upstreamModel: string): UpstreamTarget => ({ ...target(), upstreamModel });
  const ADAPTIVE = { type: 'adaptive', display: 'summarized' };

  test('maps effort to adaptive thinking + output_config.effort, never budget_tokens, for 4.6+ ids', () => {
    for (const model of ['claude-opus-4-6', 'claude-sonnet-4-6', 'claude-opus-4-7', 'claude-haiku-4-7-20260301', 'claude-sonnet-4-6-20260101', 'claude-opus-5', 'claude-sonnet-5-1', 'anthropic.claude-opus-4-6-v1', 'claude-opus-4.7']) {
      for (const [effort, sent] of [
        ['minimal', 'low'],
        ['low', 'low'],
        ['medium', 'medium'],
        ['high', 'high'],
        ['xhigh', 'high'],
        ['max', 'high'],
      ] as const) {
        const out = build({ reasoning_effort: effort, max_tokens: 32_000 }, on(model)).sent;
        assert.deepEqual(out.thinking, ADAPTIVE, `${model} ${effort}`);
        assert.deepEqual(out.output_config, { effort: sent }, `${model} ${effort}`);
        assert.ok(!JSON.stringify(out).includes('budget_tokens'), model);
      }
    }
  });

  test('older and unversioned ids keep the token budget', () => {
    for (const model of ['claude-sonnet-4-5', 'claude-opus-4-5-20251101', 'claude-opus-4-1', 'claude-opus-4-20250514', 'claude-sonnet-4-0', 'claude-3-7-sonnet-20250219', 'claude-latest', 'my-claude']) {
      const out = build({ reasoning_effort: 'medium', max_tokens: 32_000 }, on(model)).sent;
      assert.deepEqual(out.thinking, { type: 'enabled', budget_tokens: 4096 }, model);
      assert.equal(out.output_config, undefined, model);
    }
  });

  test('none, an unknown effort or no effort leave thinking and effort off; a small max_tokens does not', () => {
    for (const extra of [{ reasoning_effort: 'none' }, { reasoning_effort: 'extreme' }, {}]) {
      const out = build(extra, on('claude-opus-4-7')).sent;
      assert.equal(out.thinking, undefined);
      assert.equal(out.output_config, undefined);
    }
    assert.deepEqual(build({ reasoning_effort: 'low', max_tokens: 500 }, on('claude-opus-4-7')).sent.thinking, ADAPTIVE);
  });

  test('drops temperature and top_k with adaptive thinking, as with a budget', () => {
    const { sent, request } = build({ reasoning_effort: 'low', temperature: 0.2, top_k: 5 }, on('claude-opus-4-7'));
    assert.equal(sent.temperature, undefined);
    assert.equal(sent.top_k, undefined);
    assert.deepEqual(request.dropped, ['temperature', 'top_k']);
  });

  test('continuing a tool call without echoed thinking_blocks leaves thinking off', () => {
    const { sent, request } = build(
      {
        reasoning_effort: 'high',
        messages: [
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'w', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 't1', content: 'sunny' },
        ],
      },
      on('claude-sonnet-4-6'),
    );
    assert.equal(sent.thinking, undefined);
    assert.equal(sent.output_config, undefined);
    assert.deepEqual(request.dropped, ['reasoning_effort']);
  });

  test("a client's native thinking wins; its own output_config keeps the gateway's effort beside its keys", () => {
    const native = build({ reasoning_effort: 'high', thinking: { type: 'adaptive' } }, on('claude-opus-4-7'));
    assert.deepEqual(native.sent.thinking, { type: 'adaptive' });
    assert.equal(native.sent.output_config, undefined);
    assert.deepEqual(native.request.dropped, ['reasoning_effort']);
    const format = { type: 'json_schema', schema: { type: 'object' } };
    assert.deepEqual(build({ reasoning_effort: 'medium', output_config: { format } }, on('claude-opus-4-7')).sent.output_config, { effort: 'medium', format });
    assert.deepEqual(build({ reasoning_effort: 'medium', output_config: { effort: 'max' } }, on('claude-opus-4-7')).sent.output_config, { effort: 'max' });
  });
});

describe('buildAnthropicChatRequest: JSON mode', () => {
  test('json_schema becomes a forced json_response tool with the schema as input_schema', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    const { sent } = build({ response_format: { type: 'json_schema', json_schema: { name: 'reply', schema } } });
    assert.deepEqual(sent.tools, [{ name: 'json_response', description: 'Respond with a JSON object that matches the schema.', input_schema: schema }]);
    assert.deepEqual(sent.tool_choice, { type: 'tool', name: 'json_response' });
    assert.equal(sent.system, undefined);
  });

  test('json_object becomes a json_response tool taking any object', () => {
    const { sent } = build({ response_format: { type: 'json_object' } });
    assert.deepEqual(sent.tools, [{ name: 'json_response', description: 'Respond with a JSON object.', input_schema: { type: 'object' } }]);
    assert.deepEqual(sent.tool_choice, { type: 'tool', name: 'json_response' });
  });

  test('with thinking on, asks for the tool in the system prompt and leaves the choice to the model', () => {
    const { sent } = build({ response_format: { type: 'json_object' }, reasoning_effort: 'low', max_tokens: 4000, messages: [{ role: 'system', content: 'S' }, { role: 'user', content: 'Hi' }] });
    assert.deepEqual(sent.tool_choice, { type: 'auto' });
    assert.deepEqual(sent.system, [
      { type: 'text', text: 'S' },
      { type: 'text', text: 'Give your final answer by calling the json_response tool with the answer as its input.' },
    ]);
  });

  test("adds json_response beside the client's tools with choice any, unless the client chose", () => {
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];
    const { sent } = build({ tools, response_format: { type: 'json_object' } });
    assert.deepEqual(
      (sent.tools as { name: string }[]).map((t) => t.name),
      ['lookup', 'json_response'],
    );
    assert.deepEqual(sent.tool_choice, { type: 'any' });
    assert.deepEqual(build({ tools, tool_choice: 'auto', response_format: { type: 'json_object' } }).sent.tool_choice, { type: 'auto' });
  });

  test('response_format text changes nothing', () => {
    const { sent, request } = build({ response_format: { type: 'text' } });
    assert.equal(sent.tools, undefined);
    assert.equal(request.dropped, undefined);
  });
});

describe('buildAnthropicChatRequest: dropped and native fields', () => {
  test('drops convention fields Anthropic has no place for and lists each one', () => {
    const { sent, request } = build({
      frequency_penalty: 0.1,
      presence_penalty: 0.1,
      logit_bias: { '1': 2 },
      logprobs: true,
      top_logprobs: 2,
      seed: 7,
      n: 1,
      modalities: ['text'],
      audio: { voice: 'alloy', format: 'mp3' },
      prediction: { type: 'content', content: 'x' },
      store: true,
      service_tier: 'flex',
      web_search_options: {},
      verbosity: 'low',
      prompt_cache_key: 'k',
      prompt_cache_retention: '24h',
      prompt_cache_options: {},
      moderation: {},
      functions: [{ name: 'f' }],
      function_call: 'auto',
    });
    assert.deepEqual(
      [...(request.dropped ?? [])].sort(),
      [
        'audio',
        'frequency_penalty',
        'function_call',
        'functions',
        'logit_bias',
        'logprobs',
        'modalities',
        'moderation',
        'n',
        'prediction',
        'presence_penalty',
        'prompt_cache_key',
        'prompt_cache_options',
        'prompt_cache_retention',
        'seed',
        'service_tier',
        'store',
        'top_logprobs',
        'verbosity',
        'web_search_options',
      ],
    );
    for (const field of request.dropped ?? []) assert.equal(sent[field], undefined, field);
    assert.deepEqual(Object.keys(sent).sort(), ['max_tokens', 'messages', 'model']);
  });

  test("forwards service_tier values that are Anthropic's own", () => {
    assert.equal(build({ service_tier: 'auto' }).sent.service_tier, 'auto');
    assert.equal(build({ service_tier: 'standard_only' }).sent.service_tier, 'standard_only');
  });

  test('forwards fields outside the convention unchanged', () => {
    const native = {
      top_k: 40,
      stop_sequences: ['###'],
      container: 'container_1',
      mcp_servers: [{ type: 'url', url: 'https://mcp.example.com', name: 'x' }],
      context_management: { edits: [] },
      thinking: { type: 'disabled' },
    };
    const { sent, request } = build({ ...native, stop: 'ignored' });
    for (const [key, value] of Object.entries(native)) assert.deepEqual(sent[key], value, key);
    assert.equal(request.dropped, undefined);
  });
});
