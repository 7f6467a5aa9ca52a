// Google API error bodies → UpstreamFailure: status, message, gRPC status as type/code, retry delay.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { geminiAdapter } from '../../../src/providers/gemini/index.js';

const body = (error: unknown): string => JSON.stringify({ error });

describe('parseGeminiError', () => {
  test('reads code, message and status, with the gRPC status as type and code and no param', () => {
    const failure = geminiAdapter.parseError(400, body({ code: 400, message: 'Invalid JSON payload', status: 'INVALID_ARGUMENT' }), {});
    assert.deepEqual(failure, { status: 400, message: 'Invalid JSON payload', type: 'INVALID_ARGUMENT', code: 'INVALID_ARGUMENT', param: undefined, retryAfter: undefined });
  });

  test('takes Retry-After from the header first, else RetryInfo.retryDelay rounded up to whole seconds', () => {
    const details = (retryDelay: string): string => body({ code: 429, message: 'm', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay }] });
    assert.equal(geminiAdapter.parseError(429, details('34.4s'), {}).retryAfter, '35');
    assert.equal(geminiAdapter.parseError(429, details('5s'), {}).retryAfter, '5');
    assert.equal(geminiAdapter.parseError(429, details('0.2s'), {}).retryAfter, '1');
    assert.equal(geminiAdapter.parseError(429, details('soon'), {}).retryAfter, undefined);
    assert.equal(geminiAdapter.parseError(429, details('34.4s'), { 'retry-after': ['12'] }).retryAfter, '12');
  });

  test("reports Google's 400 API_KEY_INVALID as 401, so the gateway answers upstream_auth_failed", () => {
    const failure = geminiAdapter.parseError(
      400,
      body({
        code: 400,
        message: 'API key not valid. Please pass a valid API key.',
        status: 'INVALID_ARGUMENT',
        details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }],
      }),
      {},
    );
    assert.equal(failure.status, 401);
  });

  test('reads the one-element array form and keeps the HTTP status over the body code', () => {
    const failure = geminiAdapter.parseError(503, JSON.stringify([{ error: { code: 500, message: 'overloaded', status: 'UNAVAILABLE' } }]), {});
    assert.equal(failure.status, 503);
    assert.equal(failure.message, 'overloaded');
    assert.equal(failure.code, 'UNAVAILABLE');
  });

  test('describes a body that is not a Google error by status and a snippet', () => {
    assert.equal(geminiAdapter.parseError(502, '<html>Bad gateway</html>', {}).message, 'upstream returned HTTP 502: <html>Bad gateway</html>');
    assert.equal(geminiAdapter.parseError(500, '', {}).message, 'upstream returned HTTP 500');
    assert.equal(geminiAdapter.parseError(500, body({}), {}).message, 'upstream error (HTTP 500)');
  });

  test('caps very long messages', () => {
    assert.equal(geminiAdapter.parseError(400, body({ message: 'x'.repeat(10_000) }), {}).message.length, 2_000);
  });
});
