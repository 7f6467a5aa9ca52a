// Upstream failures → the gateway's registry (product.md §6), never leaking the gateway's own credentials.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../../../src/errors.js';
import { attemptStatusOf, failureToGatewayError, toGatewayError } from '../../../src/pipeline/upstream-error.js';
import { UpstreamFailureError, type UpstreamFailure } from '../../../src/providers/types.js';
import { SseOverflowError } from '../../../src/providers/framing/sse.js';
import { TransportError } from '../../../src/upstream/transport.js';
import { testProvider } from '../../support/provider-fixture.js';

const API_KEY = 'sk-proj-SECRET0123456789abcdef';

const PROVIDER = testProvider({ apiKey: API_KEY });

function failure(status: number, overrides: Partial<UpstreamFailure> = {}): UpstreamFailure {
  return { status, message: `upstream said ${status}`, type: undefined, code: undefined, param: undefined, retryAfter: undefined, ...overrides };
}

describe('failureToGatewayError', () => {
  test('keeps status 400, 404, 413 and 422 with the upstream message, type, code and param', () => {
    for (const status of [400, 404, 413, 422]) {
      const error = failureToGatewayError(
        failure(status, { message: 'Unsupported parameter: max_tokens', type: 'invalid_request_error', code: 'unsupported_parameter', param: 'max_tokens' }),
        PROVIDER,
      );
      assert.equal(error.code, 'upstream_rejected', String(status));
      assert.equal(error.status, status);
      assert.deepEqual(error.toBody(), {
        error: { message: 'Unsupported parameter: max_tokens', type: 'invalid_request_error', param: 'max_tokens', code: 'unsupported_parameter' },
      });
    }
  });

  test('fills a kept-status error without upstream code, type or param', () => {
    const error = failureToGatewayError(failure(400, { message: 'bad' }), PROVIDER);
    assert.equal(error.status, 400);
    assert.deepEqual(error.toBody(), { error: { message: 'bad', type: 'invalid_request_error', param: null, code: 'upstream_error' } });
  });

  test('turns an upstream 401 or 403 into 502 upstream_auth_failed, without the upstream text', () => {
    for (const status of [401, 403]) {
      const upstreamText = `Incorrect API key provided: ${API_KEY.slice(0, 12)}***. You can find your API key at https://platform.openai.com.`;
      const error = failureToGatewayError(failure(status, { message: upstreamText, type: 'invalid_request_error', code: 'invalid_api_key' }), PROVIDER);
      assert.equal(error.code, 'upstream_auth_failed');
      assert.equal(error.status, 502, 'never a 401: the client would think its own key is bad');
      assert.equal(error.toBody().error.code, 'upstream_auth_failed');
      assert.equal(error.message.includes('Incorrect API key'), false);
      assert.equal(error.message.includes(API_KEY.slice(0, 12)), false);
      assert.equal(JSON.stringify(error.toBody()).includes('invalid_api_key'), false);
    }
  });

  test('turns an upstream 429 into 429 upstream_rate_limited with its Retry-After', () => {
    const error = failureToGatewayError(failure(429, { message: 'Rate limit reached', retryAfter: '20' }), PROVIDER);
    assert.equal(error.code, 'upstream_rate_limited');
    assert.equal(error.status, 429);
    assert.deepEqual(error.headers, { 'retry-after': '20' });
    assert.equal(error.message, 'Rate limit reached');
  });

  test('sends no Retry-After when the upstream gave none', () => {
    assert.equal(failureToGatewayError(failure(429), PROVIDER).headers, undefined);
  });

  test('turns upstream 500, 502, 503 and 529 into 502 upstream_error', () => {
    for (const status of [500, 502, 503, 529]) {
      const error = failureToGatewayError(failure(status), PROVIDER);
      assert.equal(error.code, 'upstream_error', String(status));
      assert.equal(error.status, 502, String(status));
      assert.equal(error.toBody().error.code, 'upstream_error');
      assert.equal(error.message, `upstream said ${status}`);
    }
  });

  test('turns an error event inside a 200 stream (status 0) into 502 upstream_error', () => {
    const error = failureToGatewayError(failure(0, { message: 'overloaded' }), PROVIDER);
    assert.equal(error.code, 'upstream_error');
    assert.equal(error.status, 502);
  });

  test('turns upstream 408 and 504 into 504 upstream_timeout', () => {
    for (const status of [408, 504]) {
      const error = failureToGatewayError(failure(status), PROVIDER);
      assert.equal(error.code, 'upstream_timeout', String(status));
      assert.equal(error.status, 504);
    }
  });

  test("redacts the provider's api key from every message it passes on", () => {
    for (const status of [400, 429, 500, 504]) {
      const error = failureToGatewayError(failure(status, { message: `key ${API_KEY} is over quota; ${API_KEY}` }), PROVIDER);
      assert.equal(error.message.includes(API_KEY), false, String(status));
      assert.equal(error.message, 'key [redacted] is over quota; [redacted]', String(status));
    }
  });
});

describe('toGatewayError', () => {
  test('passes a GatewayError through unchanged', () => {
    const original = new GatewayError('insufficient_balance');
    assert.equal(toGatewayError(original, PROVIDER), original);
  });

  test('maps an UpstreamFailureError through failureToGatewayError', () => {
    const error = toGatewayError(new UpstreamFailureError(failure(422, { message: 'too long', code: 'context_length_exceeded' })), PROVIDER);
    assert.equal(error.status, 422);
    assert.equal(error.toBody().error.code, 'context_length_exceeded');
  });

  test('maps a transport timeout to 504 upstream_timeout', () => {
    const error = toGatewayError(new TransportError('timeout', 'the upstream timed out waiting for a response'), PROVIDER);
    assert.equal(error.code, 'upstream_timeout');
    assert.equal(error.status, 504);
  });

  test('maps every other transport failure to 502 upstream_error', () => {
    for (const reason of ['connect', 'reset', 'aborted', 'too-large'] as const) {
      const error = toGatewayError(new TransportError(reason, `failed: ${reason}`), PROVIDER);
      assert.equal(error.code, 'upstream_error', reason);
      assert.equal(error.status, 502, reason);
    }
  });

  test('maps a stream overflow to 502 upstream_error', () => {
    const error = toGatewayError(new SseOverflowError(1024), PROVIDER);
    assert.equal(error.code, 'upstream_error');
    assert.equal(error.status, 502);
  });

  test('maps anything else to 500 internal_error keeping the cause, without its text', () => {
    const bug = new TypeError('cannot read properties of undefined');
    const error = toGatewayError(bug, PROVIDER);
    assert.equal(error.code, 'internal_error');
    assert.equal(error.status, 500);
    assert.equal(error.cause, bug);
    assert.equal(JSON.stringify(error.toBody()).includes('undefined'), false);
  });
});

describe('attemptStatusOf', () => {
  test("records the upstream's status, 504 for a timeout, 499 for an abort and 502 otherwise", () => {
    assert.equal(attemptStatusOf(new UpstreamFailureError(failure(503))), 503);
    assert.equal(attemptStatusOf(new UpstreamFailureError(failure(0))), 502);
    assert.equal(attemptStatusOf(new TransportError('timeout', 't')), 504);
    assert.equal(attemptStatusOf(new TransportError('aborted', 'a')), 499);
    assert.equal(attemptStatusOf(new TransportError('connect', 'c')), 502);
    assert.equal(attemptStatusOf(new Error('x')), 502);
  });
});

describe('failureToGatewayError on a native cell (the failure keeps the upstream body)', () => {
  const body = (type: string, message: string) => JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_up' });

  test('every 4xx but the gateway-account ones keeps its status and carries the body as sent', () => {
    for (const status of [400, 404, 409, 413, 422]) {
      const text = body('invalid_request_error', `said ${status}`);
      const error = failureToGatewayError(failure(status, { type: 'invalid_request_error', body: text }), PROVIDER);
      assert.equal(error.code, 'upstream_rejected', String(status));
      assert.equal(error.status, status);
      assert.equal(error.upstreamBody, text);
    }
  });

  test('401, 402 and 403 speak of the gateway account: a 502 without the body; 429 and 408 stay the gateway answers', () => {
    for (const status of [401, 402, 403]) {
      const error = failureToGatewayError(failure(status, { body: body('authentication_error', 'no') }), PROVIDER);
      assert.equal(error.status, 502, String(status));
      assert.equal(error.upstreamBody, undefined);
    }
    const limited = failureToGatewayError(failure(429, { retryAfter: '3', body: body('rate_limit_error', 'slow down') }), PROVIDER);
    assert.deepEqual([limited.code, limited.upstreamBody, limited.headers], ['upstream_rate_limited', undefined, { 'retry-after': '3' }]);
    assert.equal(failureToGatewayError(failure(408, { body: '{}' }), PROVIDER).code, 'upstream_timeout');
  });

  test('a 529 keeps its status and body; another 5xx is a 502 with the body', () => {
    const overloaded = failureToGatewayError(failure(529, { type: 'overloaded_error', body: body('overloaded_error', 'Overloaded') }), PROVIDER);
    assert.deepEqual([overloaded.code, overloaded.status], ['upstream_error', 529]);
    assert.equal(overloaded.upstreamBody, body('overloaded_error', 'Overloaded'));
    const failed = failureToGatewayError(failure(500, { type: 'api_error', body: body('api_error', 'Internal') }), PROVIDER);
    assert.deepEqual([failed.status, failed.upstreamBody], [502, body('api_error', 'Internal')]);
  });

  test('without a body (a translated cell) nothing changes: a 409 or 529 is a 502 without a body', () => {
    for (const status of [409, 529]) {
      const error = failureToGatewayError(failure(status), PROVIDER);
      assert.deepEqual([error.status, error.upstreamBody], [502, undefined], String(status));
    }
  });

  test('the gateway key is redacted from a kept body', () => {
    const error = failureToGatewayError(failure(400, { body: body('invalid_request_error', `bad key ${API_KEY}`) }), PROVIDER);
    assert.ok(!error.upstreamBody!.includes(API_KEY));
    assert.match(error.upstreamBody!, /\[redacted\]/);
  });
});
