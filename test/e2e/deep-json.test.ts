// End to end: JSON nested deeper than 128 levels anywhere in a body — pass-through fields beside
// messages[0].content, inside content parts, top-level extras, embeddings' input — is a 400
// invalid_request naming the limit, with no hold, no upstream call, and a gateway that serves the next
// request. (Before the limit, 10,000 levels overflowed the stack serializing the upstream body: a 500.)
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { CreatedKey } from '../support/gateway-process.js';
import { assertChatOk, assertErrorResponse, call, startE2E, stopE2E, type E2E, type RawResponse } from '../support/e2e.js';
import { assertLedgerSettled, ledgerKinds } from '../support/ledger-check.js';

const LIMIT = 128;
const DEEP = 10_000;

/** `levels` nested objects as JSON text (built as text: JSON.stringify itself cannot go this deep). */
const deepObject = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
/** `levels` nested arrays as JSON text. */
const deepArray = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

/** Chat bodies with `hole` at a pass-through position. */
const CHAT_PLACES: Record<string, (hole: string) => string> = {
  'a field beside messages[0].content': (hole) => `{"model":"gpt-test","messages":[{"role":"user","content":"Hello","metadata":${hole}}]}`,
  'a field of a content part in messages[0].content': (hole) =>
    `{"model":"gpt-test","messages":[{"role":"user","content":[{"type":"text","text":"Hello","cache_control":${hole}}]}]}`,
  'a top-level extra field': (hole) => `{"model":"gpt-test","messages":[{"role":"user","content":"Hello"}],"vendor_options":${hole}}`,
  'a top-level extra field of a stream request': (hole) =>
    `{"model":"gpt-test","stream":true,"messages":[{"role":"user","content":"Hello"}],"vendor_options":${hole}}`,
};

/** Embedding bodies with `hole` at a pass-through position (or as the input itself). */
const EMBEDDING_PLACES: Record<string, (hole: string) => string> = {
  'a top-level extra field': (hole) => `{"model":"embed-test","input":"Hello","metadata":${hole}}`,
  'the input': (hole) => `{"model":"embed-test","input":${hole}}`,
};

const SHAPES: Record<string, (levels: number) => string> = { 'nested objects': deepObject, 'nested arrays': deepArray };

describe('JSON nesting depth limit (issue 15 item 3)', () => {
  let e: E2E;
  let key: CreatedKey;

  before(async () => {
    e = await startE2E();
    key = await e.gw.createKey({ name: 'deep', balance: 10 });
  });
  after(() => stopE2E(e));
  beforeEach(() => e.mock.reset());

  const post = (path: string, body: string) => call(e.gw, 'POST', path, { key: key.key, body, headers: { 'content-type': 'application/json' } });

  /** Sends `body`, expects the depth 400, and proves it left no trace and the gateway still answers. */
  async function assertRefused(path: string, body: string): Promise<void> {
    const audit = e.gw.audit(key.id);
    const entries = ledgerKinds(e.gw, key.id).length;
    const res: RawResponse = await post(path, body);
    const error = assertErrorResponse(res, 400, 'invalid_request');
    assert.match(error.message, new RegExp(`deeper than ${LIMIT} levels`), 'the message names the limit');
    assert.equal(error.type, 'invalid_request_error');
    assert.deepEqual(e.gw.audit(key.id), audit, 'no hold, no charge, no usage row');
    assert.equal(ledgerKinds(e.gw, key.id).length, entries, 'no ledger entry');
    assert.equal(e.mock.requests.length, 0, 'no upstream call');

    // The gateway is still whole: the next request of the same kind is served.
    if (path === '/chat/completions') {
      assertChatOk(await post(path, JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hello' }] })), 'gpt-test');
    } else {
      const next = await post(path, JSON.stringify({ model: 'embed-test', input: 'Hello' }));
      assert.equal(next.status, 200, next.text);
      assert.equal(next.json.data.length, 1);
    }
    assert.equal(e.mock.requests.length, 1, 'the next request reached the upstream');
  }

  for (const [place, build] of Object.entries(CHAT_PLACES)) {
    for (const [shape, nest] of Object.entries(SHAPES)) {
      test(`chat: ${DEEP.toLocaleString('en')} levels of ${shape} in ${place} answer 400 invalid_request`, () => assertRefused('/chat/completions', build(nest(DEEP))));
    }
  }

  for (const [place, build] of Object.entries(EMBEDDING_PLACES)) {
    for (const [shape, nest] of Object.entries(SHAPES)) {
      test(`embeddings: ${DEEP.toLocaleString('en')} levels of ${shape} in ${place} answer 400 invalid_request`, () => assertRefused('/embeddings', build(nest(DEEP))));
    }
  }

  test(`a body exactly ${LIMIT} levels deep is forwarded intact; one level more is refused`, async () => {
    // The body object is level 1, so a top-level field may nest LIMIT - 1 levels.
    const atLimit = CHAT_PLACES['a top-level extra field']!(deepArray(LIMIT - 1));
    const res = await post('/chat/completions', atLimit);
    assertChatOk(res, 'gpt-test');
    let forwarded: unknown = e.mock.requests[0]!.body.vendor_options;
    let levels = 0;
    while (Array.isArray(forwarded)) {
      levels++;
      forwarded = forwarded[0];
    }
    assert.equal(levels, LIMIT - 1, 'the upstream received every level');
    e.mock.reset();
    await assertRefused('/chat/completions', CHAT_PLACES['a top-level extra field']!(deepArray(LIMIT)));
    assertLedgerSettled(e.gw, key.id);
  });
});
