// A Messages request as the chat completions request of a translated cell (docs/adr/0043-messages-to-chat.md):
// system, text, images, documents, tool_use / tool_result with their ids, tools and tool_choice, thinking
// and effort, stop sequences, sampling, the output limit per kind, the hashed user, and what is dropped.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { GatewayError } from '../../../src/errors.js';
import { historyThinking, thinkingMark, withoutOwnThinking } from '../../../src/api/anthropic-messages/thinking.js';
import { chatRequestOf } from '../../../src/api/anthropic-messages/to-chat/request.js';
import { chatToolCallId, messagesToolUseId } from '../../../src/api/anthropic-messages/to-chat/tool-ids.js';
import { validateMessagesRequest, type MessagesRequestBody } from '../../../src/api/anthropic-messages/validate.js';
import { providerKind } from '../../../src/providers/kinds.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- translated bodies are arbitrary JSON
type Json = any;

const OPENAI = providerKind('openai').chatTranslation!;
const COMPATIBLE = providerKind('openai-compatible').chatTranslation!;

const request = (body: Record<string, unknown>): MessagesRequestBody => validateMessagesRequest({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }], ...body });
const translate = (body: Record<string, unknown>, maxOutput?: number) => chatRequestOf(request(body), COMPATIBLE, maxOutput);
const chat = (body: Record<string, unknown>): Json => translate(body).body;

const PNG = 'iVBORw0KGgo=';

describe('messages → chat completions: the request', () => {
  test('system blocks become one system message; text-only turns become strings', () => {
    const body = chat({
      system: [
        { type: 'text', text: 'You are Claude Code.' },
        { type: 'text', text: 'Rules.', cache_control: { type: 'ephemeral' } },
      ],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }] }, { role: 'assistant', content: 'Hello' }, { role: 'user', content: 'Again' }],
    });
    assert.deepEqual(body.messages, [
      { role: 'system', content: 'You are Claude Code.\nRules.' },
      { role: 'user', content: 'one\ntwo' },
      { role: 'assistant', content: 'Hello' },
      { role: 'user', content: 'Again' },
    ]);
    assert.equal(chat({ system: 'Be brief.' }).messages[0].content, 'Be brief.');
  });

  test("a system message inside messages (Claude Code's reminders to a model it does not know) stays a system message at its place", () => {
    const body = chat({
      system: 'You are Claude Code.',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Run it' }] },
        { role: 'system', content: 'Available agent types: ...' },
        { role: 'system', content: [{ type: 'text', text: 'Skills: ...', cache_control: { type: 'ephemeral' } }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'Bash', input: { command: 'ls' } }] },
        { role: 'system', content: 'A reminder between the call and its result' },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'a.txt' }, { type: 'text', text: 'and then?' }] },
      ],
    });
    assert.deepEqual(body.messages, [
      { role: 'system', content: 'You are Claude Code.' },
      { role: 'user', content: 'Run it' },
      { role: 'system', content: 'Available agent types: ...' },
      { role: 'system', content: 'Skills: ...' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'a.txt' },
      { role: 'system', content: 'A reminder between the call and its result' },
      { role: 'user', content: 'and then?' },
    ], 'chat wants tool results right after the calls: the reminder follows them');
    assert.throws(() => chat({ messages: [{ role: 'user', content: 'Hi' }, { role: 'developer', content: 'x' }] }), (e: unknown) => e instanceof GatewayError && /expected 'user', 'assistant' or 'system'/.test(e.message));
  });

  test('images become image_url parts (a data URI for base64, the URL as given); a PDF a file part; a text document text', () => {
    const body = chat({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look:' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'spec.pdf' },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Plain notes' }, title: 'Notes' },
          ],
        },
      ],
    });
    assert.deepEqual(body.messages[0].content, [
      { type: 'text', text: 'Look:' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
      { type: 'file', file: { filename: 'spec.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
      { type: 'text', text: 'Notes\nPlain notes' },
    ]);
  });

  test('an image or a PDF chat cannot carry by reference (a file id, a PDF URL) is a 400 naming the message', () => {
    for (const block of [
      { type: 'image', source: { type: 'file', file_id: 'file_1' } },
      { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
    ]) {
      assert.throws(
        () => translate({ messages: [{ role: 'user', content: [block] }] }),
        (error: unknown) => error instanceof GatewayError && error.status === 400 && error.param === 'messages[0].content' && /chat completions/.test(error.message),
      );
    }
  });

  test('tool_use → assistant tool_calls; tool_result → tool messages first, the rest of the turn after; is_error said', () => {
    const body = chat({
      tools: [{ name: 'Read', description: 'Reads a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }],
      messages: [
        { role: 'user', content: 'Read both' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Reading.' },
            { type: 'tool_use', id: 'toolu_01A', name: 'Read', input: { path: 'a' } },
            { type: 'tool_use', id: 'toolu_01B', name: 'Read', input: { path: 'b' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_01A', content: 'contents of a' },
            { type: 'tool_result', tool_use_id: 'toolu_01B', is_error: true, content: [{ type: 'text', text: 'no such file' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] },
            { type: 'text', text: 'Go on.' },
          ],
        },
      ],
    });
    assert.deepEqual(body.messages.slice(1), [
      {
        role: 'assistant',
        content: 'Reading.',
        tool_calls: [
          { id: 'toolu_01A', type: 'function', function: { name: 'Read', arguments: '{"path":"a"}' } },
          { id: 'toolu_01B', type: 'function', function: { name: 'Read', arguments: '{"path":"b"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_01A', content: 'contents of a' },
      { role: 'tool', tool_call_id: 'toolu_01B', content: 'Error: no such file' },
      // The image a tool returned rides on the user message after the tool messages (a tool message carries text).
      { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }, { type: 'text', text: 'Go on.' }] },
    ]);
  });

  test('a tool id chat would reject is mapped the same way in the call and in its result; valid ids pass unchanged', () => {
    const long = `toolu_${'x'.repeat(50)}`;
    const body = chat({
      messages: [
        { role: 'user', content: 'Go' },
        { role: 'assistant', content: [{ type: 'tool_use', id: long, name: 'Bash', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: long, content: 'ok' }] },
      ],
    });
    const callId = body.messages[1].tool_calls[0].id;
    assert.match(callId, /^call_[A-Za-z0-9_-]{24}$/);
    assert.equal(body.messages[2].tool_call_id, callId);
    assert.equal(chatToolCallId(long), callId, 'deterministic');
    // Back: a chat id Anthropic's clients reject becomes toolu_tg + a hash, itself valid for chat (unchanged next turn).
    const back = messagesToolUseId('functions.Read:0', 'seed');
    assert.match(back, /^toolu_tg[A-Za-z0-9_-]{24}$/);
    assert.equal(messagesToolUseId('functions.Read:0', 'other seed'), back);
    assert.equal(chatToolCallId(back), back);
    assert.equal(messagesToolUseId('call_abc', 'seed'), 'call_abc');
    assert.notEqual(messagesToolUseId(undefined, 'msg_1:0'), messagesToolUseId(undefined, 'msg_1:1'), 'a missing id: one per call');
  });

  test('tools → functions; tool_choice any / tool / none / auto; disable_parallel_tool_use → parallel_tool_calls: false', () => {
    const tools = [{ name: 'Read', description: 'Reads', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral' } }, { type: 'custom', name: 'Grep', input_schema: { type: 'object' }, strict: true }];
    const base = chat({ tools });
    assert.deepEqual(base.tools, [
      { type: 'function', function: { name: 'Read', parameters: { type: 'object' }, description: 'Reads' } },
      { type: 'function', function: { name: 'Grep', parameters: { type: 'object' }, strict: true } },
    ]);
    assert.equal(base.tool_choice, undefined);
    assert.equal(chat({ tools, tool_choice: { type: 'any' } }).tool_choice, 'required');
    assert.equal(chat({ tools, tool_choice: { type: 'auto', disable_parallel_tool_use: true } }).parallel_tool_calls, false);
    assert.deepEqual(chat({ tools, tool_choice: { type: 'tool', name: 'Grep' } }).tool_choice, { type: 'function', function: { name: 'Grep' } });
    const none = chat({ tools, tool_choice: { type: 'none', disable_parallel_tool_use: true } });
    assert.deepEqual([none.tool_choice, none.parallel_tool_calls], ['none', undefined]);
    const without = translate({ tool_choice: { type: 'any' } });
    assert.equal(without.body.tool_choice, undefined, 'no tools: nothing to choose');
    assert.ok(without.dropped.includes('tool_choice'));
  });

  test('a tool Anthropic defines or runs (web_search, bash, text_editor) is a 400 naming it', () => {
    for (const tool of [{ type: 'web_search_20250305', name: 'web_search' }, { type: 'bash_20250124', name: 'bash' }, { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' }]) {
      assert.throws(
        () => translate({ tools: [{ name: 'Read', input_schema: { type: 'object' } }, tool] }),
        (error: unknown) => error instanceof GatewayError && error.status === 400 && error.param === 'tools[1]' && error.message.includes(tool.type),
      );
    }
  });

  test('mcp_servers and container (allowed by allow_server_tools) are a 400 naming the field: no chat upstream runs them', () => {
    for (const [field, value] of [
      ['mcp_servers', [{ type: 'url', url: 'https://mcp.example.com', name: 'x' }]],
      ['container', 'container_1'],
    ] as const) {
      assert.throws(
        () => translate({ [field]: value }),
        (error: unknown) => error instanceof GatewayError && error.status === 400 && error.param === field,
      );
    }
  });

  test('thinking and effort → reasoning_effort: a budget by size, a named effort as it is (max as high), none otherwise', () => {
    const effort = (body: Record<string, unknown>) => chat(body).reasoning_effort;
    assert.equal(effort({ thinking: { type: 'enabled', budget_tokens: 1024 } }), 'low');
    assert.equal(effort({ thinking: { type: 'enabled', budget_tokens: 2048 } }), 'low');
    assert.equal(effort({ thinking: { type: 'enabled', budget_tokens: 4096 } }), 'medium');
    assert.equal(effort({ thinking: { type: 'enabled', budget_tokens: 8192 } }), 'medium');
    assert.equal(effort({ thinking: { type: 'enabled', budget_tokens: 31999 } }), 'high');
    assert.equal(effort({ thinking: { type: 'adaptive' }, output_config: { effort: 'low' } }), 'low');
    assert.equal(effort({ thinking: { type: 'adaptive' }, output_config: { effort: 'max' } }), 'high');
    assert.equal(effort({ output_config: { effort: 'medium' } }), 'medium');
    assert.equal(effort({ thinking: { type: 'adaptive' } }), undefined);
    assert.equal(effort({ thinking: { type: 'disabled' } }), undefined);
    assert.equal(effort({}), undefined);
  });

  test('max_tokens goes in the kind’s field, never above the model’s limit; stop, temperature, top_p carried; top_k dropped', () => {
    const body = request({ max_tokens: 32000, stop_sequences: ['END'], temperature: 0.2, top_p: 0.9, top_k: 5 });
    const openai = chatRequestOf(body, OPENAI, 16384);
    assert.equal(openai.body.max_completion_tokens, 16384);
    assert.equal(openai.body.max_tokens, undefined);
    const compatible = chatRequestOf(body, COMPATIBLE, undefined);
    assert.equal(compatible.body.max_tokens, 32000);
    assert.deepEqual([compatible.body.stop, compatible.body.temperature, compatible.body.top_p], [['END'], 0.2, 0.9]);
    assert.ok(compatible.dropped.includes('top_k'));
    assert.equal(chat({ stream: true }).stream, true);
  });

  test('metadata.user_id is sent hashed, never as it came; cache_control and fields chat has no place for are dropped', () => {
    const userId = '{"device_id":"abc","session_id":"s-1"}';
    const translated = translate({ metadata: { user_id: userId }, context_management: { edits: [] }, cache_control: { type: 'ephemeral' }, system: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }] });
    assert.equal(translated.body.user, createHash('sha256').update(userId).digest('hex'));
    assert.ok(!JSON.stringify(translated.body).includes('device_id'));
    assert.ok(!JSON.stringify(translated.body).includes('cache_control'));
    for (const field of ['context_management', 'cache_control']) assert.ok(translated.dropped.includes(field), field);
  });

  test('output_config.format → response_format json_schema', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    assert.deepEqual(chat({ output_config: { format: { type: 'json_schema', schema } } }).response_format, { type: 'json_schema', json_schema: { name: 'response', schema } });
  });

  test('thinking in the history never reaches a chat upstream: the gateway’s own, and an Anthropic-signed block', () => {
    const own = { type: 'thinking', thinking: 'Mine.', signature: thinkingMark('Mine.') };
    const signed = { type: 'thinking', thinking: 'Claude’s.', signature: 'RXVnZW5lIHNpZ25lZCB0aGlz' };
    const redacted = { type: 'redacted_thinking', data: 'opaque' };
    const messages = [
      { role: 'user', content: 'Q' },
      { role: 'assistant', content: [own, { type: 'text', text: 'A1' }] },
      { role: 'user', content: 'Q2' },
      { role: 'assistant', content: [signed, redacted, { type: 'text', text: 'A2' }] },
      { role: 'user', content: 'Q3' },
    ];
    const body = chat({ messages });
    assert.deepEqual(
      body.messages.filter((m: Json) => m.role === 'assistant'),
      [
        { role: 'assistant', content: 'A1' },
        { role: 'assistant', content: 'A2' },
      ],
    );
    assert.ok(!JSON.stringify(body).includes('signature'));
    assert.deepEqual(historyThinking(messages), { upstreamSigned: true, own: true });
    assert.deepEqual(historyThinking([{ role: 'assistant', content: [own] }]), { upstreamSigned: false, own: true });
    // Before a native upstream only the gateway's own go (a turn left empty with them).
    assert.deepEqual(withoutOwnThinking([messages[0], { role: 'assistant', content: [own] }, messages[3]]), [messages[0], messages[3]]);
  });

  test("Claude Code's recorded turn 2 translates: its tool loop, its hashed user, its thinking dropped", () => {
    const recorded = JSON.parse(readFileSync(new URL('../../fixtures/agents/claude-code-2.1.197-turn2.json', import.meta.url), 'utf8'));
    const { body, dropped } = chatRequestOf(validateMessagesRequest(recorded), OPENAI, 16384);
    const out = body as Json;
    assert.equal(out.messages[0].role, 'system');
    assert.ok(out.messages[0].content.startsWith('x-anthropic-billing-header'));
    assert.equal(out.tools.length, recorded.tools.length);
    const assistant = out.messages.find((m: Json) => m.role === 'assistant');
    assert.deepEqual(assistant.tool_calls, [{ id: 'toolu_mock000002', type: 'function', function: { name: 'Agent', arguments: '{"location":"Paris"}' } }]);
    const tool = out.messages.at(-1);
    assert.equal(tool.role, 'tool');
    assert.equal(tool.tool_call_id, 'toolu_mock000002');
    assert.match(tool.content, /^Error: <tool_use_error>InputValidationError/);
    assert.equal(out.reasoning_effort, 'high');
    assert.equal(out.max_completion_tokens, 16384);
    assert.equal(out.user.length, 64);
    assert.deepEqual([...dropped].sort(), ['cache_control', 'context_management', 'messages[].content[].thinking']);
  });
});
