// The one error registry: every code renders the convention's four-key envelope.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ERROR_REGISTRY, GatewayError, isGatewayError, type ErrorCode } from '../../src/errors.js';

const CODES = Object.keys(ERROR_REGISTRY) as ErrorCode[];

describe('ERROR_REGISTRY', () => {
  test('has the codes and statuses product.md names', () => {
    const statuses = Object.fromEntries(CODES.map((code) => [code, ERROR_REGISTRY[code].status]));
    assert.deepEqual(
      {
        invalid_request: statuses.invalid_request,
        invalid_api_key: statuses.invalid_api_key,
        insufficient_balance: statuses.insufficient_balance,
        model_not_found: statuses.model_not_found,
        request_too_large: statuses.request_too_large,
        unsupported_media_type: statuses.unsupported_media_type,
        rate_limited: statuses.rate_limited,
        upstream_rate_limited: statuses.upstream_rate_limited,
        upstream_error: statuses.upstream_error,
        upstream_auth_failed: statuses.upstream_auth_failed,
        upstream_timeout: statuses.upstream_timeout,
        ledger_unavailable: statuses.ledger_unavailable,
      },
      {
        invalid_request: 400,
        invalid_api_key: 401,
        insufficient_balance: 402,
        model_not_found: 404,
        request_too_large: 413,
        unsupported_media_type: 415,
        rate_limited: 429,
        upstream_rate_limited: 429,
        upstream_error: 502,
        upstream_auth_failed: 502,
        upstream_timeout: 504,
        ledger_unavailable: 503,
      },
    );
  });
});

describe('GatewayError', () => {
  test('renders every registry entry with exactly message, type, param and code', () => {
    for (const code of CODES) {
      const error = new GatewayError(code);
      const spec = ERROR_REGISTRY[code];
      assert.equal(error.status, spec.status, code);
      assert.deepEqual(error.toBody(), { error: { message: spec.message, type: spec.type, param: null, code } }, code);
      assert.deepEqual(Object.keys(error.toBody().error), ['message', 'type', 'param', 'code'], code);
      assert.ok(spec.message.length > 0, code);
    }
  });

  test('survives a JSON round trip with all four keys present (null, not missing)', () => {
    const wire = JSON.parse(JSON.stringify(new GatewayError('invalid_api_key').toBody())) as { error: Record<string, unknown> };
    assert.ok('param' in wire.error && wire.error.param === null);
    assert.equal(wire.error.code, 'invalid_api_key');
  });

  test('takes a custom message and param', () => {
    const error = new GatewayError('invalid_request', { message: "Missing required parameter: 'model'.", param: 'model' });
    assert.deepEqual(error.toBody(), {
      error: { message: "Missing required parameter: 'model'.", type: 'invalid_request_error', param: 'model', code: 'invalid_request' },
    });
    assert.equal(error.message, "Missing required parameter: 'model'.");
  });

  test('adds metadata only when given', () => {
    assert.equal('metadata' in new GatewayError('insufficient_balance').toBody().error, false);
    const metadata = { hold: 0.5, available: 0.1, affordable_max_tokens: 12 };
    const body = new GatewayError('insufficient_balance', { metadata }).toBody();
    assert.deepEqual(body.error.metadata, metadata);
    assert.deepEqual(Object.keys(body.error), ['message', 'type', 'param', 'code', 'metadata']);
  });

  test('upstream_rejected keeps a custom status, type and wire code', () => {
    const error = new GatewayError('upstream_rejected', {
      status: 422,
      message: 'This model does not support tools.',
      type: 'invalid_request_error',
      wireCode: 'unsupported_parameter',
      param: 'tools',
    });
    assert.equal(error.status, 422);
    assert.equal(error.code, 'upstream_rejected');
    assert.deepEqual(error.toBody(), {
      error: { message: 'This model does not support tools.', type: 'invalid_request_error', param: 'tools', code: 'unsupported_parameter' },
    });
  });

  test('sends a null wire code when told to', () => {
    assert.equal(new GatewayError('upstream_rejected', { wireCode: null }).toBody().error.code, null);
  });

  test('carries headers and a cause without rendering them', () => {
    const cause = new Error('disk full');
    const error = new GatewayError('ledger_unavailable', { headers: { 'retry-after': '1' }, cause });
    assert.deepEqual(error.headers, { 'retry-after': '1' });
    assert.equal(error.cause, cause);
    assert.equal(JSON.stringify(error.toBody()).includes('disk full'), false);
    assert.equal(new GatewayError('internal_error').headers, undefined);
  });

  test('is recognised by isGatewayError and is an Error', () => {
    const error = new GatewayError('not_found');
    assert.equal(isGatewayError(error), true);
    assert.ok(error instanceof Error);
    assert.equal(error.name, 'GatewayError');
    assert.equal(isGatewayError(new Error('x')), false);
    assert.equal(isGatewayError({ code: 'not_found', status: 404 }), false);
  });
});
