// The Responses → chat completions request translation (src/api/openai-responses/to-chat/): instructions and
// system/developer items as one system message at the front, messages, function calls merged into one
// assistant message with ids chat accepts, tool outputs as tool messages, reasoning dropped; tools
// (functions, a flattened namespace, hosted tools dropped, others refused); the settings carried; stored
// state refused with §14's message; the recorded Codex body accepted.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { chatCallId, responsesCallId } from '../../../../src/api/openai-responses/to-chat/call-ids.js';
import { chatRequestOf } from '../../../../src/api/openai-responses/to-chat/request.js';
import type { ResponsesBody } from '../../../../src/api/openai-responses/validate.js';
import { GatewayError } from '../../../../src/errors.js';
import type { ChatTranslation } from '../../../../src/providers/kinds.js';

const COMPATIBLE: ChatTranslation = { from: ['messages', 'responses'], outputLimit: 'max_tokens' };
const OPENAI: ChatTranslation = { from: ['messages', 'responses'], outputLimit: 'max_completion_tokens' };
const FN = { type: 'function', name: 'get_weather', description: 'Weather.', strict: true, parameters: { type: 'object', properties: { city: { type: 'string' } } } };

const translate = (body: Record<string, unknown>, translation = COMPATIBLE, max: number | undefined = 4096) =>
  chatRequestOf({ model: 'local', ...body } as ResponsesBody, translation, max);

function refusal(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof GatewayError);
    return error;
  }
  assert.fail('expected a refusal');
}

describe('responses → chat: input', () => {
  test('instructions and every system/developer item make ONE system message at the front, in order', () => {
    const { body } = translate({
      instructions: 'Be brief.',
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Dev A' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] },
        { type: 'message', role: 'system', content: 'Sys B' },
      ],
    });
    assert.deepEqual(body.messages, [
      { role: 'system', content: 'Be brief.\n\nDev A\n\nSys B' },
      { role: 'user', content: 'Hi' },
    ]);
  });

  test('a string input is one user message; images are image_url parts', () => {
    assert.deepEqual(translate({ input: 'Hello' }).body.messages, [{ role: 'user', content: 'Hello' }]);
    const { body } = translate({ input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' }] }] });
    assert.deepEqual(body.messages, [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } }] }]);
  });

  test('assistant text and the calls after it are one assistant message; outputs are tool messages; reasoning is dropped', () => {
    const long = 'call:' + 'x'.repeat(60);
    const { body } = translate({
      input: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'thinking' }], encrypted_content: null },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
        { type: 'function_call', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: long, name: 'get_weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'call_a', output: '18 C' },
        { type: 'function_call_output', call_id: long, output: [{ type: 'input_text', text: '21 C' }] },
      ],
    });
    const mapped = chatCallId(long);
    assert.match(mapped, /^[A-Za-z0-9_-]{1,40}$/);
    assert.deepEqual(body.messages, [
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: mapped, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: '18 C' },
      { role: 'tool', tool_call_id: mapped, content: '21 C' },
    ]);
  });

  test('an image in a tool output follows the tool messages as a user message', () => {
    const { body } = translate({
      input: [
        { type: 'function_call', call_id: 'c1', name: 'view_image', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_image', image_url: 'data:image/png;base64,AA' }] },
        { role: 'user', content: 'Describe it.' },
      ],
    });
    assert.deepEqual(
      body.messages.map((m) => m.role),
      ['assistant', 'tool', 'user', 'user'],
    );
    assert.deepEqual(body.messages[2], { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } }] });
  });

  test('an item chat cannot express is a 400 naming it', () => {
    const error = refusal(() => translate({ input: [{ type: 'local_shell_call', call_id: 'x', action: {} }] }));
    assert.equal(error.status, 400);
    assert.equal(error.param, 'input[0].type');
  });
});

describe('responses → chat: call ids', () => {
  test('ids chat accepts pass both ways; others map to call_ + a hash, the same every time, and back unchanged', () => {
    assert.equal(chatCallId('call_abc-1'), 'call_abc-1');
    const odd = 'functions.Read:0';
    assert.equal(chatCallId(odd), chatCallId(odd));
    assert.match(chatCallId(odd), /^call_[A-Za-z0-9_-]{24}$/);
    // An upstream id chat would reject becomes a call_id that goes back to chat unchanged.
    const back = responsesCallId(odd, 'seed');
    assert.equal(back, chatCallId(odd));
    assert.equal(chatCallId(back), back);
    assert.equal(responsesCallId(undefined, 'resp_1:0'), responsesCallId('', 'resp_1:0'));
    assert.notEqual(responsesCallId(undefined, 'resp_1:0'), responsesCallId(undefined, 'resp_1:1'));
  });
});

describe('responses → chat: tools and settings', () => {
  test('functions carried, a namespace flattened (and remembered), hosted tools dropped and listed', () => {
    const ns = { type: 'namespace', name: 'agents', tools: [{ type: 'function', name: 'spawn', parameters: { type: 'object', properties: {} } }] };
    const chat = translate({ input: 'x', tools: [FN, ns, { type: 'web_search', external_web_access: false }], tool_choice: 'auto', parallel_tool_calls: true });
    assert.deepEqual(chat.body.tools, [
      { type: 'function', function: { name: 'get_weather', description: 'Weather.', parameters: FN.parameters, strict: true } },
      { type: 'function', function: { name: 'spawn', parameters: { type: 'object', properties: {} } } },
    ]);
    assert.equal(chat.body.tool_choice, 'auto');
    assert.equal(chat.body.parallel_tool_calls, true);
    assert.deepEqual([...chat.namespaces], [['spawn', 'agents']]);
    assert.ok(chat.dropped.includes('tools[2] (web_search)'));
  });

  test('only hosted tools: no tools, no tool_choice, no parallel_tool_calls go upstream', () => {
    const chat = translate({ input: 'x', tools: [{ type: 'web_search' }], tool_choice: 'auto', parallel_tool_calls: false });
    assert.deepEqual([chat.body.tools, chat.body.tool_choice, chat.body.parallel_tool_calls], [undefined, undefined, undefined]);
  });

  test('a forced hosted tool and a custom tool are 400s naming them', () => {
    const forced = refusal(() => translate({ input: 'x', tools: [FN, { type: 'web_search' }], tool_choice: { type: 'web_search' } }));
    assert.deepEqual([forced.status, forced.code, forced.param], [400, 'unsupported_parameter', 'tool_choice']);
    assert.match(forced.message, /web_search/);
    const custom = refusal(() => translate({ input: 'x', tools: [{ type: 'custom', name: 'apply_patch' }] }));
    assert.deepEqual([custom.param, custom.code], ['tools[0].type', 'unsupported_parameter']);
    assert.match(custom.message, /'custom'/);
  });

  test('a named function choice, allowed_tools as its mode', () => {
    assert.deepEqual(translate({ input: 'x', tools: [FN], tool_choice: { type: 'function', name: 'get_weather' } }).body.tool_choice, { type: 'function', function: { name: 'get_weather' } });
    assert.equal(translate({ input: 'x', tools: [FN], tool_choice: { type: 'allowed_tools', mode: 'required', tools: [] } }).body.tool_choice, 'required');
  });

  test("the output limit goes in the kind's field: max_output_tokens, else the model's (Codex sends none), never above the model's", () => {
    assert.equal(translate({ input: 'x' }).body.max_tokens, 4096);
    assert.equal(translate({ input: 'x', max_output_tokens: 100 }).body.max_tokens, 100);
    assert.equal(translate({ input: 'x', max_output_tokens: 9000 }).body.max_tokens, 4096);
    const openai = translate({ input: 'x', max_output_tokens: 100 }, OPENAI).body;
    assert.deepEqual([openai.max_completion_tokens, openai.max_tokens], [100, undefined]);
  });

  test('temperature, top_p, reasoning effort, structured output carried; the user hashed; the rest dropped or ignored', () => {
    const chat = translate({
      input: 'x',
      temperature: 0.2,
      top_p: 0.9,
      reasoning: { effort: 'high', summary: 'auto' },
      text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
      user: 'alice@example.com',
      prompt_cache_key: 'session-1',
      store: false,
      include: ['reasoning.encrypted_content'],
      stream: true,
    });
    const b = chat.body;
    assert.deepEqual([b.temperature, b.top_p, b.reasoning_effort, b.stream], [0.2, 0.9, 'high', true]);
    assert.deepEqual(b.response_format, { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } });
    assert.match(String(b.user), /^[0-9a-f]{64}$/);
    assert.deepEqual(chat.dropped, ['prompt_cache_key']);
    assert.deepEqual(translate({ input: 'x', text: { format: { type: 'json_object' } } }).body.response_format, { type: 'json_object' });
  });

  test('previous_response_id, an item_reference, conversation and prompt are 400 unsupported_parameter: send the full history', () => {
    for (const [body, param] of [
      [{ input: 'x', previous_response_id: 'resp_1' }, 'previous_response_id'],
      [{ input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0]'],
      [{ input: 'x', conversation: 'conv_1' }, 'conversation'],
      [{ input: 'x', prompt: { id: 'pmpt_1' } }, 'prompt'],
    ] as const) {
      const error = refusal(() => translate(body));
      assert.deepEqual([error.status, error.code, error.param], [400, 'unsupported_parameter', param]);
      assert.match(error.message, /full history .*store: false/);
    }
  });

  test('the recorded Codex 0.171 body translates: its functions and sub-agent namespace kept, web_search dropped', () => {
    const codex = JSON.parse(readFileSync(new URL('../../../fixtures/agents/codex-0.171.0-turn2.json', import.meta.url), 'utf8')) as ResponsesBody;
    const chat = chatRequestOf(codex, COMPATIBLE, 4096);
    const names = (chat.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
    assert.ok(names.includes('exec_command') && names.includes('close_agent'));
    assert.equal(chat.body.messages[0]!.role, 'system');
    assert.equal(chat.body.messages.filter((m) => m.role === 'system').length, 1);
    const assistant = chat.body.messages.find((m) => m.role === 'assistant')!;
    assert.deepEqual(assistant.tool_calls, [{ id: 'call_mock3mwygnaej', type: 'function', function: { name: 'exec_command', arguments: '{"location":"Paris"}' } }]);
    assert.equal(chat.body.messages.at(-1)!.role, 'tool');
    assert.equal(chat.body.max_tokens, 4096);
    assert.ok(chat.dropped.some((d) => d.includes('web_search')));
  });
});
