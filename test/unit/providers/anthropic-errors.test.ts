// Anthropic error bodies → UpstreamFailure.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { parseAnthropicError, statusForErrorType } from '../../../src/providers/anthropic/errors.js';

describe('parseAnthropicError', () => {
  test('reads {type:"error", error:{type, message}} with the type as type and code', () => {
    const body = JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } });
    assert.deepEqual(parseAnthropicError(400, body, {}), {
      status: 400,
      message: 'max_tokens: Field required',
      type: 'invalid_request_error',
      code: 'invalid_request_error',
      param: undefined,
      retryAfter: undefined,
    });
  });

  test('keeps the HTTP status and the retry-after header', () => {
    const body = JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'Slow down' } });
    const failure = parseAnthropicError(429, body, { 'retry-after': '17' });
    assert.equal(failure.status, 429);
    assert.equal(failure.retryAfter, '17');
    assert.equal(parseAnthropicError(429, body, { 'retry-after': ['3', '4'] }).retryAfter, '3');
  });

  test('a body that is not JSON is quoted briefly, with the status', () => {
    const failure = parseAnthropicError(502, '<html>Bad gateway</html>', {});
    assert.equal(failure.status, 502);
    assert.equal(failure.message, 'upstream returned HTTP 502: <html>Bad gateway</html>');
    assert.equal(failure.type, undefined);
    assert.equal(parseAnthropicError(503, '', {}).message, 'upstream returned HTTP 503');
  });

  test('an error without a message gets one naming the status', () => {
    const failure = parseAnthropicError(500, JSON.stringify({ type: 'error', error: { type: 'api_error' } }), {});
    assert.equal(failure.message, 'upstream error (HTTP 500)');
    assert.equal(failure.code, 'api_error');
  });

  test('cuts very long messages', () => {
    const failure = parseAnthropicError(400, JSON.stringify({ type: 'error', error: { type: 'x', message: 'a'.repeat(10_000) } }), {});
    assert.equal(failure.message.length, 2000);
  });
});

describe('statusForErrorType', () => {
  test('maps each documented error type to its HTTP status, unknown types to 500', () => {
    const expected: Record<string, number> = {
      invalid_request_error: 400,
      authentication_error: 401,
      billing_error: 402,
      permission_error: 403,
      not_found_error: 404,
      request_too_large: 413,
      rate_limit_error: 429,
      api_error: 500,
      timeout_error: 504,
      overloaded_error: 529,
      brand_new_error: 500,
    };
    for (const [type, status] of Object.entries(expected)) assert.equal(statusForErrorType(type), status, type);
    assert.equal(statusForErrorType(undefined), 500);
  });
});
