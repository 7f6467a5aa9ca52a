// Edge validation: only model, messages/input and the hold-sizing fields are checked; the rest passes through.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../../../src/errors.js';
import { validateChatRequest } from '../../../src/api/openai-chat/validate.js';
import { validateEmbeddingRequest } from '../../../src/api/openai-embeddings/validate.js';

const MESSAGES = [{ role: 'user', content: 'Hi' }];

/** Asserts a 400 invalid_request naming `param`. */
function assertInvalid(run: () => unknown, param: string | null, label: string): void {
  assert.throws(
    run,
    (error: unknown) => {
      assert.ok(error instanceof GatewayError, `${label}: expected a GatewayError, got ${String(error)}`);
      assert.equal(error.code, 'invalid_request', label);
      assert.equal(error.status, 400, label);
      assert.equal(error.param, param, label);
      const body = error.toBody();
      assert.deepEqual(Object.keys(body.error), ['message', 'type', 'param', 'code'], label);
      assert.equal(body.error.type, 'invalid_request_error', label);
      return true;
    },
    label,
  );
}

describe('validateChatRequest', () => {
  test('accepts a minimal request and returns the same object', () => {
    const body = { model: 'gpt-4o-mini', messages: MESSAGES };
    assert.equal(validateChatRequest(body), body);
  });

  test('passes unknown extra fields through untouched', () => {
    const body = {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hi', custom_part: { x: 1 } }],
      temperature: '0.7',
      tools: [{ type: 'function', function: { name: 'f' } }],
      vendor_extension: { deep: [1, { two: null }] },
      parallel_tool_calls: false,
    };
    const copy = structuredClone(body);
    assert.equal(validateChatRequest(body), body);
    assert.deepEqual(body, copy);
  });

  test('accepts content as a string, an array of parts or null, and any role string', () => {
    const body = {
      model: 'm',
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c', content: 'ok' },
        { role: 'assistant' },
      ],
    };
    assert.equal(validateChatRequest(body), body);
  });

  test('accepts null for max_tokens, max_completion_tokens, n, stream and stream_options', () => {
    const body = { model: 'm', messages: MESSAGES, max_tokens: null, max_completion_tokens: null, n: null, stream: null, stream_options: null };
    assert.equal(validateChatRequest(body), body);
  });

  test('accepts valid hold-sizing fields', () => {
    const body = { model: 'm', messages: MESSAGES, max_tokens: 1, max_completion_tokens: 100_000, n: 128, stream: true, stream_options: { include_usage: false } };
    assert.equal(validateChatRequest(body), body);
  });

  test('rejects a missing, empty or non-string model with param "model"', () => {
    assertInvalid(() => validateChatRequest({ messages: MESSAGES }), 'model', 'missing model');
    assertInvalid(() => validateChatRequest({ model: '', messages: MESSAGES }), 'model', 'empty model');
    assertInvalid(() => validateChatRequest({ model: 42, messages: MESSAGES }), 'model', 'numeric model');
    assertInvalid(() => validateChatRequest({ model: null, messages: MESSAGES }), 'model', 'null model');
  });

  test('rejects missing, empty or non-array messages with param "messages"', () => {
    assertInvalid(() => validateChatRequest({ model: 'm' }), 'messages', 'missing messages');
    assertInvalid(() => validateChatRequest({ model: 'm', messages: [] }), 'messages', 'empty messages');
    assertInvalid(() => validateChatRequest({ model: 'm', messages: 'Hi' }), 'messages', 'string messages');
    assertInvalid(() => validateChatRequest({ model: 'm', messages: { role: 'user' } }), 'messages', 'object messages');
  });

  test('names the message that has no role, or a role of the wrong type', () => {
    assertInvalid(() => validateChatRequest({ model: 'm', messages: [{ content: 'Hi' }] }), 'messages[0].role', 'no role');
    assertInvalid(
      () => validateChatRequest({ model: 'm', messages: [{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }, { content: 'c' }] }),
      'messages[2].role',
      'third message without role',
    );
    assertInvalid(() => validateChatRequest({ model: 'm', messages: [{ role: 7, content: 'Hi' }] }), 'messages[0].role', 'numeric role');
    assertInvalid(() => validateChatRequest({ model: 'm', messages: [{ role: '', content: 'Hi' }] }), 'messages[0].role', 'empty role');
  });

  test('names a message that is not an object', () => {
    assertInvalid(() => validateChatRequest({ model: 'm', messages: ['Hi'] }), 'messages[0]', 'string message');
  });

  test('rejects content of the wrong type', () => {
    assertInvalid(() => validateChatRequest({ model: 'm', messages: [{ role: 'user', content: 42 }] }), 'messages[0].content', 'number');
    assertInvalid(() => validateChatRequest({ model: 'm', messages: [{ role: 'user', content: { text: 'x' } }] }), 'messages[0].content', 'object');
  });

  test('rejects max_tokens that is 0, a string or a fraction', () => {
    assertInvalid(() => validateChatRequest({ model: 'm', messages: MESSAGES, max_tokens: 0 }), 'max_tokens', 'zero');
    assertInvalid(() => validateChatRequest({ model: 'm', messages: MESSAGES, max_tokens: '5' }), 'max_tokens', 'string');
    assertInvalid(() => validateChatRequest({ model: 'm', messages: MESSAGES, max_tokens: 1.5 }), 'max_tokens', 'fraction');
    assertInvalid(() => validateChatRequest({ model: 'm', messages: MESSAGES, max_tokens: -1 }), 'max_tokens', 'negative');
  });

  test('rejects a bad max_completion_tokens', () => {
    assertInvalid(() => validateChatRequest({ model: 'm', messages: MESSAGES, max_completion_tokens: 0 }), 'max_completion_tokens', 'zero');
    assertInvalid(() => validateChatRequest({ model: 'm', messages: MESSAGES, max_completion_tokens: '100' }), 'max_completion_tokens', 'string');
  });

  test('rejects n of 0 or above 128', () => {
    assertInvalid(() => validateChatRequest({ model: 'm', messages: MESSAGES, n: 0 }), 'n', 'zero');
    assertInvalid(() => validateChatRequest({ model: 'm', messages: MESSAGES, n: 129 }), 'n', 'too many');
    assertInvalid(() => validateChatRequest({ model: 'm', messages: MESSAGES, n: 2.5 }), 'n', 'fraction');
  });

  test('rejects a stream flag that is not a boolean, and non-object stream_options', () => {
    assertInvalid(() => validateChatRequest({ model: 'm', messages: MESSAGES, stream: 'yes' }), 'stream', 'string');
    assertInvalid(() => validateChatRequest({ model: 'm', messages: MESSAGES, stream: 1 }), 'stream', 'number');
    assertInvalid(() => validateChatRequest({ model: 'm', messages: MESSAGES, stream: true, stream_options: 'x' }), 'stream_options', 'string');
  });

  test('rejects a body that is not a JSON object, with a null param', () => {
    assertInvalid(() => validateChatRequest(null), null, 'null');
    assertInvalid(() => validateChatRequest([]), null, 'array');
    assertInvalid(() => validateChatRequest('text'), null, 'string');
  });
});

describe('validateEmbeddingRequest', () => {
  test('accepts a string, strings, a token array and token arrays', () => {
    for (const input of ['hello', ['a', 'b'], [1, 2, 3], [[1, 2], [3]], [0]]) {
      const body = { model: 'text-embedding-3-small', input, encoding_format: 'base64', dimensions: 256 };
      assert.equal(validateEmbeddingRequest(body), body, JSON.stringify(input));
    }
  });

  test('rejects an empty, missing or ill-typed input with param "input"', () => {
    for (const input of ['', [], [''], ['a', ''], 42, null, true, { text: 'x' }, [[]], [1.5], [-1], [['a']], ['a', 1]]) {
      assertInvalid(() => validateEmbeddingRequest({ model: 'm', input }), 'input', JSON.stringify(input));
    }
    assertInvalid(() => validateEmbeddingRequest({ model: 'm' }), 'input', 'missing');
  });

  test('rejects a missing or empty model with param "model"', () => {
    assertInvalid(() => validateEmbeddingRequest({ input: 'x' }), 'model', 'missing');
    assertInvalid(() => validateEmbeddingRequest({ model: '', input: 'x' }), 'model', 'empty');
  });

  test('rejects a body that is not a JSON object', () => {
    assertInvalid(() => validateEmbeddingRequest('x'), null, 'string body');
  });
});
