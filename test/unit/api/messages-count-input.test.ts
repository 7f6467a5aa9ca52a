// The input estimate of a Messages request and its cache-write prefix (product.md §14, "Hold, Messages"):
// what is counted, in the upstream's reading order (tools, system, messages), and where the last
// cache_control marker cuts the prompt.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { countMessagesInput } from '../../../src/api/anthropic-messages/count-input.js';
import { imageTokens, PDF_PAGE_TOKENS } from '../../../src/api/anthropic-messages/media.js';
import { countText } from '../../../src/tokens/count-text.js';

const user = (content: unknown) => ({ role: 'user', content });
const tokens = async (body: Parameters<typeof countMessagesInput>[0], overhead = 0) => (await countMessagesInput(body, overhead)).tokens;
const EMPTY = [user('')];

describe('countMessagesInput', () => {
  test('counts a string system prompt and its blocks alike, and message text', async () => {
    const base = await tokens({ messages: EMPTY });
    const text = 'You are a careful assistant who answers briefly.';
    assert.equal(await tokens({ system: text, messages: EMPTY }), base + countText(text));
    assert.equal(await tokens({ system: [{ type: 'text', text }], messages: EMPTY }), base + countText(text));
    assert.equal(await tokens({ messages: [user([{ type: 'text', text }])] }), base + countText(text));
  });

  test('counts thinking text but never its signature; tool inputs as JSON; tool results; redacted thinking by size', async () => {
    const base = await tokens({ messages: [user(''), { role: 'assistant', content: [] }] });
    const thinking = { type: 'thinking', thinking: 'Let me think about the weather in Paris.', signature: 'A'.repeat(4000) };
    const withThinking = await tokens({ messages: [user(''), { role: 'assistant', content: [thinking] }] });
    assert.equal(withThinking, base + countText(thinking.thinking));
    const call = { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } };
    assert.equal(await tokens({ messages: [user(''), { role: 'assistant', content: [call] }] }), base + countText('get_weather') + countText('{"city":"Paris"}'));
    const result = { type: 'tool_result', tool_use_id: 'toolu_01', content: [{ type: 'text', text: 'Sunny, 24 °C' }] };
    assert.equal(await tokens({ messages: [user([result]), { role: 'assistant', content: [] }] }), base + countText('Sunny, 24 °C'));
    assert.equal(await tokens({ messages: [user(''), { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'x'.repeat(400) }] }] }), base + 100);
  });

  test('adds the tool overhead once when tools are given, with each definition', async () => {
    const tool = { name: 'get_weather', description: 'Current weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } };
    const base = await tokens({ messages: EMPTY }, 800);
    assert.equal(await tokens({ messages: EMPTY, tools: [] }, 800), base, 'no tools: no overhead');
    assert.equal(await tokens({ messages: EMPTY, tools: [tool] }, 800), base + 800 + countText(JSON.stringify(tool)));
    assert.equal(await tokens({ messages: EMPTY, tools: [tool, tool] }, 800), base + 800 + 2 * countText(JSON.stringify(tool)));
  });

  test('images by their size, PDFs by their pages', async () => {
    const base = await tokens({ messages: EMPTY });
    const png = Buffer.alloc(33);
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(png, 0);
    png.write('IHDR', 12, 'latin1');
    png.writeUInt32BE(400, 16);
    png.writeUInt32BE(300, 20);
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') } };
    assert.equal(await tokens({ messages: [user([image])] }), base + imageTokens({ width: 400, height: 300 }));
    const pdf = Buffer.from('%PDF-1.4 << /Type /Page >> << /Type /Page >> << /Type /Page >>', 'latin1').toString('base64');
    const document = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf } };
    assert.equal(await tokens({ messages: [user([document])] }), base + 3 * PDF_PAGE_TOKENS);
    // A document of plain text is its text.
    assert.equal(await tokens({ messages: [user([{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Plain words.' } }])] }), base + countText('Plain words.'));
  });

  test('without a cache_control marker there is no cache-write prefix', async () => {
    assert.equal((await countMessagesInput({ system: 'Be brief.', messages: [user('Hi')] }, 0)).cacheWrite, undefined);
  });

  test('the prefix runs through tools, system and messages up to the last marker, in that order', async () => {
    const tool = { name: 'get_weather', input_schema: { type: 'object' } };
    const system = 'A long and careful system prompt.';
    const body = {
      tools: [{ ...tool, cache_control: { type: 'ephemeral' } }],
      system: [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }],
      messages: [user([{ type: 'text', text: 'First question.', cache_control: { type: 'ephemeral' } }]), { role: 'assistant', content: 'An answer.' }, user('A new question.')],
    };
    const counted = await countMessagesInput(body, 500);
    const expectedPrefix = 500 + countText(JSON.stringify(tool)) + countText(system) + 3 + countText('First question.');
    assert.deepEqual(counted.cacheWrite, { tokens: expectedPrefix, oneHour: false });
    assert.equal(counted.tokens, expectedPrefix + 3 + countText('An answer.') + 3 + countText('A new question.'));
  });

  test('any marker asking for one hour makes the prefix a 1-hour write; a top-level cache_control writes the whole prompt', async () => {
    const oneHour = await countMessagesInput(
      { system: [{ type: 'text', text: 'System.', cache_control: { type: 'ephemeral', ttl: '1h' } }], messages: [user([{ type: 'text', text: 'Q', cache_control: { type: 'ephemeral' } }])] },
      0,
    );
    assert.equal(oneHour.cacheWrite?.oneHour, true);
    assert.equal(oneHour.cacheWrite?.tokens, oneHour.tokens);
    const automatic = await countMessagesInput({ cache_control: { type: 'ephemeral' }, system: 'System.', messages: [user('Q'), { role: 'assistant', content: 'A' }] }, 0);
    assert.deepEqual(automatic.cacheWrite, { tokens: automatic.tokens, oneHour: false });
  });

  test('a long block counted once is remembered: the same request counts the same', async () => {
    const system = 'You are Claude Code, an agent. '.repeat(500);
    const body = { system: [{ type: 'text', text: system }], messages: [user('List the files.')] };
    // No time budget: exact counts are compared, whatever the machine's load.
    const first = await countMessagesInput(body, 0, Infinity);
    const again = await countMessagesInput({ ...body, system: [{ type: 'text', text: `${system}` }] }, 0, Infinity);
    assert.deepEqual(again, first);
    assert.equal(first.tokens, 3 + countText(system) + countText('List the files.'));
  });
});
