// Upstream error bodies in every OpenAI-compatible dialect → one UpstreamFailure.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseOpenAIError, readOpenAIErrorObject } from '../../../src/providers/openai/errors.js';

const FIXTURES = new URL('../../fixtures/upstream/', import.meta.url);

describe('parseOpenAIError', () => {
  test('reads the OpenAI {error: {message, type, param, code}} body (recorded)', () => {
    const body = readFileSync(new URL('openai/reasoning-model-legacy-parameter-error.json', FIXTURES), 'utf8');
    assert.deepEqual(parseOpenAIError(400, body, {}), {
      status: 400,
      message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      type: 'invalid_request_error',
      code: 'unsupported_parameter',
      param: 'max_tokens',
      retryAfter: undefined,
    });
  });

  test('reads {error: "text"}', () => {
    assert.deepEqual(parseOpenAIError(500, '{"error":"model crashed"}', {}), {
      status: 500,
      message: 'model crashed',
      type: undefined,
      code: undefined,
      param: undefined,
      retryAfter: undefined,
    });
  });

  test("reads vLLM's {object: 'error', message, type, code}, leaving out its numeric code (the HTTP status again)", () => {
    const body = JSON.stringify({ object: 'error', message: 'max_tokens is too large', type: 'BadRequestError', param: null, code: 400 });
    assert.deepEqual(parseOpenAIError(400, body, {}), {
      status: 400,
      message: 'max_tokens is too large',
      type: 'BadRequestError',
      code: undefined,
      param: undefined,
      retryAfter: undefined,
    });
  });

  test("reads FastAPI's {detail: 'text'}", () => {
    const failure = parseOpenAIError(404, '{"detail":"Not Found"}', {});
    assert.equal(failure.message, 'Not Found');
    assert.equal(failure.status, 404);
  });

  test('quotes a non-JSON body in the message', () => {
    const failure = parseOpenAIError(502, '<html><body>Bad Gateway</body></html>\n', {});
    assert.deepEqual(failure, {
      status: 502,
      message: 'upstream returned HTTP 502: <html><body>Bad Gateway</body></html>',
      type: undefined,
      code: undefined,
      param: undefined,
      retryAfter: undefined,
    });
  });

  test('cuts a long non-JSON body to 200 characters', () => {
    const failure = parseOpenAIError(503, 'x'.repeat(5000), {});
    assert.equal(failure.message, `upstream returned HTTP 503: ${'x'.repeat(200)}`);
  });

  test('names only the status for an empty body or a JSON body without a message', () => {
    assert.equal(parseOpenAIError(503, '', {}).message, 'upstream returned HTTP 503');
    assert.equal(parseOpenAIError(503, '{"foo":1}', {}).message, 'upstream returned HTTP 503: {"foo":1}');
  });

  test('falls back to a generic message for an error object without one', () => {
    assert.equal(parseOpenAIError(500, '{"error":{"type":"server_error"}}', {}).message, 'upstream error (HTTP 500)');
  });

  test('reads the retry-after header, also when it is repeated', () => {
    assert.equal(parseOpenAIError(429, '{"error":{"message":"slow down"}}', { 'retry-after': '20' }).retryAfter, '20');
    assert.equal(parseOpenAIError(429, '', { 'retry-after': ['7', '9'] }).retryAfter, '7');
    assert.equal(parseOpenAIError(429, '', {}).retryAfter, undefined);
  });

  test('cuts an upstream message to 2000 characters', () => {
    const failure = parseOpenAIError(400, JSON.stringify({ error: { message: 'm'.repeat(10_000) } }), {});
    assert.equal(failure.message.length, 2000);
  });
});

describe('readOpenAIErrorObject', () => {
  test('reads an error member found inside a stream event', () => {
    assert.deepEqual(readOpenAIErrorObject({ message: 'overloaded', type: 'server_error', code: 'overloaded', param: 'x' }, 0), {
      status: 0,
      message: 'overloaded',
      type: 'server_error',
      code: 'overloaded',
      param: 'x',
      retryAfter: undefined,
    });
  });
});
