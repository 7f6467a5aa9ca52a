// Where a client may put its key (product.md §14): Authorization: Bearer, x-api-key (Anthropic's SDK and
// Claude Code's ANTHROPIC_API_KEY) or api-key (Azure's); the first that holds a Tollgate key wins, two
// different ones are refused; and Claude Code's start-up probes (HEAD / and HEAD /api/hello) answer 200
// without any key. In process (test/support/in-process.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { keySecretOf } from '../../../src/http/auth.js';
import { assertErrorAnswer, startInProcess, type InProcessGateway } from '../../support/in-process.js';

describe('credential headers (in process)', () => {
  let gw: InProcessGateway;
  let key: string;
  let other: string;

  before(async () => {
    gw = await startInProcess();
    key = (await gw.issueKey({ name: 'first' })).secret;
    other = (await gw.issueKey({ name: 'second' })).secret;
  });
  after(() => gw.close());

  test('a key in Authorization: Bearer, x-api-key or api-key is read alike', async () => {
    const variants: Array<Record<string, string>> = [{ authorization: `Bearer ${key}` }, { 'x-api-key': key }, { 'api-key': key }];
    for (const headers of variants) {
      const res = await gw.call('GET', '/key', { headers });
      assert.equal(res.statusCode, 200, JSON.stringify(headers));
      assert.equal(res.json().data.name, 'first');
    }
  });

  test('the same key in two headers is one key; a foreign bearer token beside an x-api-key does not hide it', async () => {
    assert.equal((await gw.call('GET', '/key', { headers: { authorization: `Bearer ${key}`, 'x-api-key': key } })).statusCode, 200);
    // Claude Code may send an Authorization header of its own beside the key in x-api-key.
    assert.equal((await gw.call('GET', '/key', { headers: { authorization: 'Bearer sk-ant-not-ours', 'x-api-key': key } })).statusCode, 200);
  });

  test('two different Tollgate keys in one request are refused with the one 401 body', async () => {
    const res = await gw.call('POST', '/chat/completions', {
      headers: { authorization: `Bearer ${key}`, 'x-api-key': other },
      body: { model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] },
    });
    assertErrorAnswer(res, 401, 'invalid_api_key');
    assert.equal(gw.mock.requests.length, 0);
  });

  test('HEAD / and HEAD /api/hello answer 200 with no body and need no key', async () => {
    for (const url of ['/', '/api/hello']) {
      const res = await gw.app.inject({ method: 'HEAD', url });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.body, '');
      assert.ok(res.headers['x-request-id']);
    }
  });
});

describe('keySecretOf', () => {
  const a = `tg-${'A'.repeat(43)}`;
  const b = `tg-${'B'.repeat(43)}`;
  test('reads a Tollgate key from any of the three headers, the first first', () => {
    assert.equal(keySecretOf({ authorization: `Bearer ${a}` }), a);
    assert.equal(keySecretOf({ 'x-api-key': a }), a);
    assert.equal(keySecretOf({ 'api-key': [a] }), a);
    assert.equal(keySecretOf({ authorization: 'Bearer sk-other', 'api-key': a }), a);
  });
  test('none, or two different ones: no key', () => {
    assert.equal(keySecretOf({}), undefined);
    assert.equal(keySecretOf({ authorization: 'Basic xyz', 'x-api-key': 'sk-ant-123' }), undefined);
    assert.equal(keySecretOf({ authorization: `Bearer ${a}`, 'x-api-key': b }), undefined);
  });
});
