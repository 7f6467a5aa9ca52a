// The client API's refusals, in process (test/support/in-process.ts: the real server answered by inject):
// every way a key can be wrong gets one 401 body; a bad body, an unknown route or model, a non-JSON body and
// an oversized one each get their status and code in the OpenAI envelope, with an x-request-id, and never
// reach the upstream. test/e2e/errors.test.ts pins the same through a spawned gateway.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { revokeKey } from '../../../src/operations/keys.js';
import { assertErrorAnswer, startInProcess, type InProcessGateway } from '../../support/in-process.js';
import { mockConfig } from '../../support/mock-config.js';

const MESSAGES = [{ role: 'user', content: 'Hi' }];
const MAX_BODY_BYTES = 4096;

describe('refusals of the client API (in process)', () => {
  let gw: InProcessGateway;
  let key: string;
  let limited: string;
  let revoked: string;
  let expired: string;

  before(async () => {
    gw = await startInProcess((mock) => mockConfig(mock).replace('server:\n', `server:\n  max_body_bytes: ${MAX_BODY_BYTES}\n`));
    key = (await gw.issueKey({ name: 'main' })).secret;
    limited = (await gw.issueKey({ name: 'limited', allowedModels: ['gpt-test'] })).secret;
    const toRevoke = await gw.issueKey({ name: 'revoked' });
    await revokeKey(gw.store, toRevoke.key.id);
    revoked = toRevoke.secret;
    // Issued two hours ago to expire after one.
    expired = (await gw.issueKey({ name: 'expired', limits: { expires_at: '1h' } }, Date.now() - 2 * 3_600_000)).secret;
  });
  after(() => gw.close());
  beforeEach(() => gw.mock.reset());

  test('missing, non-bearer, malformed, unknown, revoked and expired keys all get one identical 401 body, and no upstream call', async () => {
    const attempts: Record<string, Record<string, string>> = {
      'no Authorization header': {},
      'a Basic credential': { authorization: 'Basic Zm9vOmJhcg==' },
      'a bearer token that is not a Tollgate key': { authorization: 'Bearer not-a-tollgate-key' },
      'an unknown tg- key': { authorization: `Bearer tg-${'A'.repeat(43)}` },
      'a revoked key': { authorization: `Bearer ${revoked}` },
      'an expired key': { authorization: `Bearer ${expired}` },
    };
    const bodies = new Map<string, string>();
    for (const [what, headers] of Object.entries(attempts)) {
      const res = await gw.call('POST', '/chat/completions', { headers, body: { model: 'gpt-test', messages: MESSAGES } });
      assertErrorAnswer(res, 401, 'invalid_api_key');
      bodies.set(what, res.body);
      // The other endpoints refuse the same way.
      for (const path of ['/models', '/key']) assert.equal((await gw.call('GET', path, { headers })).body, res.body, `${what} on GET ${path}`);
    }
    assert.equal(new Set(bodies.values()).size, 1, 'one body for every way a key is wrong');
    assert.equal(gw.mock.requests.length, 0, 'no upstream call');
  });

  test('a valid key is let through', async () => {
    const res = await gw.call('GET', '/models', { key });
    assert.equal(res.statusCode, 200);
  });

  test('400 invalid_request: malformed JSON, a missing model (param model), an embedding without input (param input)', async () => {
    const malformed = await gw.call('POST', '/chat/completions', { key, headers: { 'content-type': 'application/json' }, body: '{"model": "gpt-test", "messages": [' });
    assert.equal(assertErrorAnswer(malformed, 400, 'invalid_request').param, null);
    const noModel = await gw.call('POST', '/chat/completions', { key, body: { messages: MESSAGES } });
    assert.equal(assertErrorAnswer(noModel, 400, 'invalid_request').param, 'model');
    const noInput = await gw.call('POST', '/embeddings', { key, body: { model: 'embed-test' } });
    assert.equal(assertErrorAnswer(noInput, 400, 'invalid_request').param, 'input');
    assert.equal(gw.mock.requests.length, 0, 'no upstream call');
  });

  test('404: an unknown route is not_found; an unknown model and one the key may not use get the same model_not_found body', async () => {
    for (const [method, path] of [['GET', '/no-such-route'], ['POST', '/no-such-route'], ['GET', '/chat/completions']] as const) {
      assertErrorAnswer(await gw.call(method, path, { key, body: method === 'POST' ? {} : undefined }), 404, 'not_found');
    }
    const forbidden = await gw.call('POST', '/chat/completions', { key: limited, body: { model: 'gpt-locked', messages: MESSAGES } });
    const unknown = await gw.call('POST', '/chat/completions', { key: limited, body: { model: 'gpt-lockex', messages: MESSAGES } });
    assertErrorAnswer(forbidden, 404, 'model_not_found');
    assertErrorAnswer(unknown, 404, 'model_not_found');
    assert.equal(forbidden.body.replaceAll('gpt-locked', 'gpt-lockex'), unknown.body);
    assert.equal(gw.mock.requests.length, 0, 'no upstream call');
  });

  test('415 unsupported_media_type: a POST body sent as text/plain or with no content-type', async () => {
    const json = JSON.stringify({ model: 'gpt-test', messages: MESSAGES });
    assertErrorAnswer(await gw.call('POST', '/chat/completions', { key, headers: { 'content-type': 'text/plain' }, body: json }), 415, 'unsupported_media_type');
    assertErrorAnswer(await gw.call('POST', '/chat/completions', { key, body: new TextEncoder().encode(json) }), 415, 'unsupported_media_type');
    assert.equal(gw.mock.requests.length, 0, 'no upstream call');
  });

  test('413 request_too_large: a body over server.max_body_bytes; one just under it is served', async () => {
    const over = await gw.call('POST', '/chat/completions', { key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'x'.repeat(MAX_BODY_BYTES) }] } });
    assertErrorAnswer(over, 413, 'request_too_large');
    assert.equal(gw.mock.requests.length, 0, 'no upstream call');
    const under = await gw.call('POST', '/chat/completions', { key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'x'.repeat(MAX_BODY_BYTES - 200) }] } });
    assert.equal(under.statusCode, 200, under.body);
  });

  test('every answer carries its own x-request-id, errors and unknown routes included', async () => {
    const answers = await Promise.all([
      gw.call('GET', '/no-such-route', { key }),
      gw.call('GET', '/no-such-route'),
      gw.call('GET', '/models', { key }),
      gw.call('GET', '/key'),
      gw.call('POST', '/chat/completions', { key, body: { messages: MESSAGES } }),
    ]);
    const ids = answers.map((res) => res.headers['x-request-id']);
    for (const id of ids) assert.match(String(id), /^\S+$/);
    assert.equal(new Set(ids).size, ids.length);
  });
});
