// Errors in the Messages envelope with the statuses and headers of product.md §14's table.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { messagesEnvelope } from '../../../src/api/anthropic-messages/envelope.js';
import { GatewayError } from '../../../src/errors.js';
import { ErrorAnswer } from '../../../src/http/render-error.js';

const answer = (error: GatewayError, now = Date.now()) => {
  const shaped = messagesEnvelope(error, 'req_gw', now);
  assert.ok(shaped instanceof ErrorAnswer);
  return shaped;
};

describe('messagesEnvelope', () => {
  test('maps the registry to Messages error types and statuses', () => {
    const cases: Array<[GatewayError, number, string]> = [
      [new GatewayError('invalid_request'), 400, 'invalid_request_error'],
      [new GatewayError('model_not_supported_on_endpoint'), 400, 'invalid_request_error'],
      [new GatewayError('invalid_api_key'), 401, 'authentication_error'],
      [new GatewayError('model_not_found'), 404, 'not_found_error'],
      [new GatewayError('request_too_large'), 413, 'request_too_large'],
      [new GatewayError('rate_limited', { headers: { 'retry-after': '3' } }), 429, 'rate_limit_error'],
      [new GatewayError('upstream_error'), 502, 'api_error'],
      [new GatewayError('upstream_error', { status: 529 }), 529, 'overloaded_error'],
      [new GatewayError('upstream_timeout'), 504, 'timeout_error'],
      [new GatewayError('ledger_unavailable', { headers: { 'retry-after': '1' } }), 503, 'api_error'],
      [new GatewayError('internal_error'), 500, 'api_error'],
      [new GatewayError('idempotency_in_progress'), 409, 'invalid_request_error'],
    ];
    for (const [error, status, type] of cases) {
      const shaped = answer(error);
      assert.equal(shaped.status, status, error.code);
      assert.deepEqual(shaped.body, { type: 'error', error: { type, message: error.message }, request_id: 'req_gw' }, error.code);
    }
  });

  test('402 billing_error carries its figures and x-should-retry: false', () => {
    const metadata = { hold: 0.06, available: 0.01, affordable_max_tokens: 120 };
    const shaped = answer(new GatewayError('insufficient_balance', { message: 'Insufficient balance.', metadata }));
    assert.deepEqual([shaped.status, shaped.headers], [402, { 'x-should-retry': 'false' }]);
    assert.deepEqual(shaped.body, { type: 'error', error: { type: 'billing_error', message: 'Insufficient balance.', metadata }, request_id: 'req_gw' });
  });

  test('a spent budget is 429 billing_error, retry-after in whole seconds to the reset, x-should-retry: false', () => {
    const now = Date.parse('2026-11-05T23:59:58.500Z');
    const error = new GatewayError('budget_exceeded', { metadata: { budget: 5, used: 5, resets_at: '2026-11-06T00:00:00.000Z' } });
    const shaped = answer(error, now);
    assert.deepEqual([shaped.status, shaped.headers], [429, { 'x-should-retry': 'false', 'retry-after': '2' }]);
    assert.equal((shaped.body as { error: { type: string } }).error.type, 'billing_error');
  });

  test("a native upstream's own Messages error is answered byte for byte; anything else is not", () => {
    const text = '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"},"request_id":"req_up"}';
    const shaped = answer(new GatewayError('upstream_rejected', { status: 400, upstreamBody: text }));
    assert.deepEqual([shaped.status, shaped.body], [400, text]);
    const html = answer(new GatewayError('upstream_error', { upstreamBody: '<html>502</html>' }));
    assert.equal(html.status, 502);
    assert.equal(typeof html.body, 'object');
    const openai = answer(new GatewayError('upstream_rejected', { status: 400, upstreamBody: '{"error":{"message":"x"}}' }));
    assert.equal(typeof openai.body, 'object', 'another API’s error body is not passed to a Messages client');
  });
});
