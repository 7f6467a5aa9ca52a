// Protocol-level errors: Node's parser and timer codes → the registry, rendered as complete HTTP/1.1
// responses in the same envelope as every other error.
import assert from 'node:assert/strict';
import { maxHeaderSize } from 'node:http';
import { describe, test } from 'node:test';
import { GatewayError } from '../../../src/errors.js';
import { protocolError } from '../../../src/http/client-error.js';
import { rawErrorResponse } from '../../../src/http/render-error.js';

describe('protocolError', () => {
  test('maps oversized headers to 431, timeouts to 408, oversized chunk extensions to 413, and any other parser error to 400', () => {
    const cases: Array<[string | undefined, string, number]> = [
      ['HPE_HEADER_OVERFLOW', 'headers_too_large', 431],
      ['ERR_HTTP_REQUEST_TIMEOUT', 'request_timeout', 408],
      ['HPE_CHUNK_EXTENSIONS_OVERFLOW', 'request_too_large', 413],
      ['HPE_INVALID_METHOD', 'invalid_request', 400],
      ['HPE_INVALID_HEADER_TOKEN', 'invalid_request', 400],
      ['HPE_INVALID_CHUNK_SIZE', 'invalid_request', 400],
      [undefined, 'invalid_request', 400],
    ];
    for (const [nodeCode, code, status] of cases) {
      const error = protocolError(nodeCode);
      assert.equal(error.code, code, String(nodeCode));
      assert.equal(error.status, status, String(nodeCode));
      assert.equal(error.type, 'invalid_request_error', String(nodeCode));
    }
  });

  test("names Node's header size limit in the 431 message", () => {
    assert.match(protocolError('HPE_HEADER_OVERFLOW').message, new RegExp(`larger than ${maxHeaderSize} bytes`));
  });
});

describe('rawErrorResponse', () => {
  test('is a complete HTTP/1.1 response: status line, JSON type, exact length, request id, connection close, the envelope', () => {
    const error = new GatewayError('headers_too_large', { message: 'Too large: é' });
    const text = rawErrorResponse(error, 'req_abc');
    const [head, body] = text.split('\r\n\r\n') as [string, string];
    assert.deepEqual(head.split('\r\n'), [
      'HTTP/1.1 431 Request Header Fields Too Large',
      'content-type: application/json; charset=utf-8',
      `content-length: ${Buffer.byteLength(body)}`,
      'x-request-id: req_abc',
      'connection: close',
    ]);
    assert.deepEqual(JSON.parse(body), error.toBody());
    assert.notEqual(Buffer.byteLength(body), body.length, 'the length counts bytes, not characters');
  });
});
