// Input estimates for holds: messages, tool definitions, images and schemas all count as input.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { countChatInput, IMAGE_PART_TOKENS } from '../../../src/api/openai-chat/count-input.js';
import { countEmbeddingInput } from '../../../src/api/openai-embeddings/count-input.js';
import { countText } from '../../../src/tokens/count-text.js';

/** The fixed framing countChatInput adds: 3 tokens priming the reply, 3 per message. */
const PRIMING = 3;
const PER_MESSAGE = 3;

const WEATHER_TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Get the current weather for a city.',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string', description: 'City name, e.g. Paris' }, unit: { type: 'string', enum: ['c', 'f'] } },
        required: ['city'],
      },
    },
  },
];

describe('countText', () => {
  test('counts o200k_base tokens and 0 for the empty string', async () => {
    assert.equal(countText(''), 0);
    assert.equal(countText('hello'), 1);
    assert.equal(countText('Hello, world!'), 4);
  });
});

describe('countChatInput', () => {
  test('counts a message with string content as framing + role + content', async () => {
    const body = { messages: [{ role: 'user', content: 'What is the capital of France?' }] };
    assert.equal(await countChatInput(body), PRIMING + PER_MESSAGE + countText('user') + countText('What is the capital of France?'));
  });

  test('sums every message', async () => {
    const body = {
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Hi' },
      ],
    };
    const expected = PRIMING + 2 * PER_MESSAGE + countText('system') + countText('You are terse.') + countText('user') + countText('Hi');
    assert.equal(await countChatInput(body), expected);
  });

  test('counts the tool definitions: with tools is more than without by exactly their JSON', async () => {
    const messages = [{ role: 'user', content: 'Weather in Paris?' }];
    const without = await countChatInput({ messages });
    const withTools = await countChatInput({ messages, tools: WEATHER_TOOLS });
    assert.ok(withTools > without);
    assert.equal(withTools - without, countText(JSON.stringify(WEATHER_TOOLS)));
  });

  test('counts legacy function definitions too', async () => {
    const messages = [{ role: 'user', content: 'x' }];
    const functions = [WEATHER_TOOLS[0]!.function];
    assert.equal(await countChatInput({ messages, functions }) - await countChatInput({ messages }), countText(JSON.stringify(functions)));
  });

  test('counts text parts of array content', async () => {
    const parts = { messages: [{ role: 'user', content: [{ type: 'text', text: 'Describe' }, { type: 'text', text: ' this picture' }] }] };
    assert.equal(await countChatInput(parts), PRIMING + PER_MESSAGE + countText('user') + countText('Describe') + countText(' this picture'));
  });

  test('counts an image part as IMAGE_PART_TOKENS without decoding it', async () => {
    assert.equal(IMAGE_PART_TOKENS, 765);
    const body = {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(50_000)}`, detail: 'high' } },
          ],
        },
      ],
    };
    assert.equal(await countChatInput(body), PRIMING + PER_MESSAGE + countText('user') + countText('What is this?') + IMAGE_PART_TOKENS);
  });

  test('counts tool_calls on assistant messages and the tool_call_id of tool results', async () => {
    const toolCalls = [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }];
    const body = {
      messages: [
        { role: 'assistant', content: null, tool_calls: toolCalls },
        { role: 'tool', tool_call_id: 'call_1', content: '18C and sunny' },
      ],
    };
    const expected =
      PRIMING +
      2 * PER_MESSAGE +
      countText('assistant') +
      countText(JSON.stringify(toolCalls)) +
      countText('tool') +
      countText('18C and sunny') +
      countText('call_1');
    assert.equal(await countChatInput(body), expected);
  });

  test('counts a message name plus one token', async () => {
    const body = { messages: [{ role: 'user', name: 'alice', content: 'hi' }] };
    assert.equal(await countChatInput(body), PRIMING + PER_MESSAGE + countText('user') + countText('hi') + countText('alice') + 1);
  });

  test('counts a json_schema response_format, and nothing for json_object', async () => {
    const messages = [{ role: 'user', content: 'Give me a city.' }];
    const jsonSchema = {
      name: 'city',
      strict: true,
      schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false },
    };
    const base = await countChatInput({ messages });
    assert.equal(
      await countChatInput({ messages, response_format: { type: 'json_schema', json_schema: jsonSchema } }) - base,
      countText(JSON.stringify(jsonSchema)),
    );
    assert.equal(await countChatInput({ messages, response_format: { type: 'json_object' } }), base);
  });

  test('estimates a huge tool definition at 4 characters per token', async () => {
    const messages = [{ role: 'user', content: 'x' }];
    const tools = [{ type: 'function', function: { name: 'big', description: 'z'.repeat(20_000) } }];
    const length = JSON.stringify(tools).length;
    assert.equal(await countChatInput({ messages, tools }) - await countChatInput({ messages }), Math.ceil(length / 4));
  });
});

describe('countEmbeddingInput', () => {
  test('counts a string', async () => {
    assert.equal(await countEmbeddingInput('The food was delicious'), countText('The food was delicious'));
    assert.ok(countText('The food was delicious') > 1);
  });

  test('sums an array of strings', async () => {
    assert.equal(await countEmbeddingInput(['hello world', 'good night']), countText('hello world') + countText('good night'));
  });

  test('counts a token array by its length', async () => {
    assert.equal(await countEmbeddingInput([1212, 318, 257, 1332]), 4);
  });

  test('sums the lengths of an array of token arrays', async () => {
    assert.equal(await countEmbeddingInput([[1, 2, 3], [4], [5, 6]]), 6);
  });

  test('counts nothing for an input it cannot read', async () => {
    assert.equal(await countEmbeddingInput(undefined), 0);
    assert.equal(await countEmbeddingInput({ text: 'x' }), 0);
  });
});
