// drainRefusedBody: the rest of a refused body is read and discarded until it ends, within a byte and a
// time bound; a declared length over the byte bound is not read at all. A PassThrough stands in for the
// request (the fields the drain reads: complete, destroyed, headers).
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { DRAIN_MAX_BYTES, drainRefusedBody } from '../../../src/http/refused-body.js';

type FakeRequest = PassThrough & { complete: boolean; headers: Record<string, string> };

function fakeRequest(headers: Record<string, string> = {}): FakeRequest {
  const req = new PassThrough() as FakeRequest;
  req.complete = false;
  req.headers = headers;
  req.on('end', () => (req.complete = true));
  return req;
}

const asRequest = (req: FakeRequest) => req as unknown as IncomingMessage;

describe('drainRefusedBody', () => {
  test('reads the rest of the body and resolves true when it ends', async () => {
    const req = fakeRequest();
    const drained = drainRefusedBody(asRequest(req), { maxBytes: 1000, maxMs: 60_000 });
    req.write(Buffer.alloc(400));
    req.write(Buffer.alloc(400));
    req.end();
    assert.equal(await drained, true);
    assert.equal(req.listenerCount('data'), 0, 'its listeners are gone');
  });

  test('resolves true at once for a body already read to its end', async () => {
    const req = fakeRequest();
    req.complete = true;
    assert.equal(await drainRefusedBody(asRequest(req)), true);
  });

  test('stops at the byte bound and resolves false, leaving the body flowing (the rest is discarded, not left unread)', async () => {
    const req = fakeRequest();
    const drained = drainRefusedBody(asRequest(req), { maxBytes: 1000, maxMs: 60_000 });
    req.write(Buffer.alloc(600));
    req.write(Buffer.alloc(600));
    assert.equal(await drained, false);
    assert.equal(req.readableFlowing, true);
    req.destroy();
  });

  test('stops at the time bound and resolves false when the body does not end', async () => {
    const req = fakeRequest();
    const drained = drainRefusedBody(asRequest(req), { maxBytes: 1000, maxMs: 20 });
    req.write(Buffer.alloc(10));
    assert.equal(await drained, false);
    req.destroy();
  });

  test('does not read a body whose Content-Length is over the byte bound', async () => {
    const req = fakeRequest({ 'content-length': String(DRAIN_MAX_BYTES + 1) });
    assert.equal(await drainRefusedBody(asRequest(req)), false);
    assert.equal(req.readableFlowing, null, 'never resumed');
    // At the bound it is drained.
    const atBound = fakeRequest({ 'content-length': String(DRAIN_MAX_BYTES) });
    const drained = drainRefusedBody(asRequest(atBound));
    atBound.end(Buffer.alloc(16));
    assert.equal(await drained, true);
  });

  test('resolves false when the connection fails before the body ended', async () => {
    const req = fakeRequest();
    const drained = drainRefusedBody(asRequest(req), { maxBytes: 1000, maxMs: 60_000 });
    req.write(Buffer.alloc(10));
    req.destroy();
    assert.equal(await drained, false);
    const destroyed = fakeRequest();
    destroyed.destroy();
    assert.equal(await drainRefusedBody(asRequest(destroyed)), false);
  });
});
