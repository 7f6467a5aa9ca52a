// Transport failures are classified once: connect, timeout, reset, aborted.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ClientGoneReason, toTransportError, TotalTimeoutReason, TransportError } from '../../../src/upstream/transport.js';

function coded(code: string): Error {
  return Object.assign(new Error(code), { code });
}

describe('toTransportError', () => {
  test('classifies undici and socket timeouts as timeout', () => {
    for (const code of ['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']) {
      assert.equal(toTransportError(coded(code), undefined).reason, 'timeout', code);
    }
    assert.equal(toTransportError(coded('UND_ERR_CONNECT_TIMEOUT'), undefined).message, 'the upstream timed out connecting');
    assert.equal(toTransportError(coded('UND_ERR_BODY_TIMEOUT'), undefined).message, 'the upstream timed out waiting for more data');
    assert.equal(toTransportError(coded('UND_ERR_HEADERS_TIMEOUT'), undefined).message, 'the upstream timed out waiting for a response');
  });

  test('classifies refused and unresolvable connections as connect', () => {
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT']) {
      const error = toTransportError(coded(code), undefined);
      assert.equal(error.reason, 'connect', code);
      assert.equal(error.message, `cannot connect to the upstream (${code})`);
    }
  });

  test('classifies anything else as reset, keeping the cause', () => {
    const cause = coded('ECONNRESET');
    const error = toTransportError(cause, undefined);
    assert.equal(error.reason, 'reset');
    assert.equal(error.cause, cause);
    assert.equal(toTransportError('weird', undefined).reason, 'reset');
  });

  test('classifies an abort by the total time limit as timeout and a client abort as aborted', () => {
    const total = new AbortController();
    total.abort(new TotalTimeoutReason());
    assert.equal(toTransportError(coded('UND_ERR_ABORTED'), total.signal).reason, 'timeout');
    const client = new AbortController();
    client.abort(new ClientGoneReason());
    assert.equal(toTransportError(coded('ECONNREFUSED'), client.signal).reason, 'aborted');
  });

  test('returns a TransportError unchanged', () => {
    const original = new TransportError('too-large', 'too big');
    assert.equal(toTransportError(original, undefined), original);
  });
});
