// The input side of a Responses request's hold: what the model reads — instructions, messages with their
// text and image parts, function calls and outputs, reasoning summaries, tool definitions — and nothing
// it does not (encrypted reasoning, ids; an item_reference's context is the stored response's, added apart).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { countResponsesInput } from '../../../../src/api/openai-responses/count-input.js';
import { IMAGE_PART_TOKENS } from '../../../../src/api/openai-chat/count-input.js';
import { countText } from '../../../../src/tokens/count-text.js';

const base = { model: 'm', input: [{ role: 'user', content: 'Hello there.' }] };
const count = (body: Record<string, unknown>) => countResponsesInput(body);

describe('countResponsesInput', () => {
  test('a string input counts like one user message of that text', async () => {
    assert.equal(await count({ model: 'm', input: 'Hello there.' }), (await count(base)) - countText('user'));
  });

  test('instructions, tool definitions and a JSON schema text format are read as input', async () => {
    const plain = await count(base);
    assert.equal(await count({ ...base, instructions: 'Be brief and kind.' }), plain + countText('Be brief and kind.'));
    const tools = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];
    assert.equal(await count({ ...base, tools }), plain + countText(JSON.stringify(tools)));
    const schema = { type: 'object', properties: { answer: { type: 'string' } } };
    assert.equal(await count({ ...base, text: { format: { type: 'json_schema', name: 'a', schema } } }), plain + countText(JSON.stringify(schema)));
  });

  test('an image part is a fixed cost, not its URL or data', async () => {
    const image = { role: 'user', content: [{ type: 'input_image', image_url: `data:image/png;base64,${'A'.repeat(50_000)}` }] };
    const text = { role: 'user', content: [{ type: 'input_text', text: 'x' }] };
    assert.equal((await count({ model: 'm', input: [image] })) - (await count({ model: 'm', input: [text] })), IMAGE_PART_TOKENS - countText('x'));
  });

  test('function calls count their name and arguments, outputs their text', async () => {
    const call = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' };
    const output = { type: 'function_call_output', call_id: 'call_1', output: '18 C and sunny' };
    const plain = await count(base);
    assert.equal(await count({ ...base, input: [...base.input, call] }), plain + 3 + countText('get_weather') + countText('{"city":"Paris"}'));
    assert.equal(await count({ ...base, input: [...base.input, output] }), plain + 3 + countText('18 C and sunny'));
  });

  test("a reasoning item counts its summary text, never its encrypted_content; an item_reference counts nothing", async () => {
    const summary = [{ type: 'summary_text', text: 'I should answer briefly.' }];
    const small = await count({ ...base, input: [...base.input, { type: 'reasoning', id: 'rs_1', summary, encrypted_content: 'gAAAA' }] });
    const large = await count({ ...base, input: [...base.input, { type: 'reasoning', id: 'rs_1', summary, encrypted_content: `gAAAA${'x'.repeat(100_000)}` }] });
    assert.equal(small, large);
    assert.equal(small, (await count(base)) + 3 + countText('I should answer briefly.'));
    assert.equal(await count({ ...base, input: [...base.input, { type: 'item_reference', id: 'msg_1' }] }), await count(base));
  });
});
