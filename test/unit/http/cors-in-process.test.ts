// CORS on /v1, in process: a listed origin's preflight is answered before key auth, with only the request
// headers a page may send; any other origin, or no server.cors_origins at all, gets no CORS header.
// test/e2e/ops-cors.test.ts pins the same through a spawned gateway, and the SDK in Chromium beside it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { startInProcess, type InProcessGateway } from '../../support/in-process.js';
import { mockConfig } from '../../support/mock-config.js';

const ALLOWED = 'https://app.example.com';

function corsHeaders(res: LightMyRequestResponse): Record<string, string> {
  return Object.fromEntries(Object.entries(res.headers).filter(([name]) => name.startsWith('access-control-')).map(([name, value]) => [name, String(value)]));
}

function preflight(gw: InProcessGateway, origin: string, requestHeaders = 'authorization,content-type'): Promise<LightMyRequestResponse> {
  return gw.call('OPTIONS', '/chat/completions', {
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': requestHeaders },
  });
}

describe('CORS with server.cors_origins (in process)', () => {
  let gw: InProcessGateway;
  let key: string;
  before(async () => {
    gw = await startInProcess((mock) => mockConfig(mock).replace('server:\n', `server:\n  cors_origins: ["${ALLOWED}"]\n`));
    key = (await gw.issueKey()).secret;
  });
  after(() => gw.close());

  test("a listed origin's preflight is answered 204 without a key, allowing only the headers a page may send", async () => {
    const res = await preflight(gw, ALLOWED, 'authorization, content-type, X-Stainless-OS, idempotency-key, x-tollgate-dry-run, anthropic-version, x-evil, cookie');
    assert.equal(res.statusCode, 204);
    // (It also lists the exposed headers, which matter only on the call itself: below.)
    const { 'access-control-expose-headers': _exposed, ...headers } = corsHeaders(res);
    assert.deepEqual(headers, {
      'access-control-allow-origin': ALLOWED,
      'access-control-allow-methods': 'GET, POST',
      'access-control-allow-headers': 'authorization, content-type, x-stainless-os, idempotency-key, x-tollgate-dry-run, anthropic-version',
      'access-control-max-age': '600',
    });
    assert.match(String(res.headers.vary), /origin/i);
    assert.equal(gw.mock.requests.length, 0, 'a preflight never reaches an upstream');
  });

  test("a listed origin's call, and its refusal, carry Access-Control-Allow-Origin and expose x-request-id", async () => {
    for (const res of [await gw.call('GET', '/models', { key, headers: { origin: ALLOWED } }), await gw.call('GET', '/models', { headers: { origin: ALLOWED } })]) {
      assert.equal(res.headers['access-control-allow-origin'], ALLOWED);
      assert.ok(String(res.headers['access-control-expose-headers']).split(/\s*,\s*/).includes('x-request-id'));
    }
  });

  test('/v1/account answers a listed origin too, PATCH included, before the account token is checked', async () => {
    const res = await gw.call('OPTIONS', '/account/keys/key_0123456789abcdef', {
      headers: { origin: ALLOWED, 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization, content-type' },
    });
    assert.equal(res.statusCode, 204);
    assert.equal(res.headers['access-control-allow-origin'], ALLOWED);
    assert.equal(res.headers['access-control-allow-methods'], 'GET, POST, PATCH');
    const refused = await gw.call('GET', '/account', { headers: { origin: ALLOWED } });
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.headers['access-control-allow-origin'], ALLOWED);
    assert.deepEqual(corsHeaders(await gw.call('GET', '/account', { headers: { origin: 'https://evil.example' } })), {});
  });

  test('another origin gets no CORS header, on its preflight or its call', async () => {
    for (const origin of ['https://evil.example', 'http://app.example.com', 'https://app.example.com.evil.net', 'null']) {
      assert.deepEqual(corsHeaders(await preflight(gw, origin)), {}, origin);
      assert.deepEqual(corsHeaders(await gw.call('GET', '/models', { key, headers: { origin } })), {}, origin);
    }
  });
});

describe('CORS without server.cors_origins (in process)', () => {
  let gw: InProcessGateway;
  before(async () => {
    gw = await startInProcess();
  });
  after(() => gw.close());

  test('no origin gets a CORS header', async () => {
    assert.deepEqual(corsHeaders(await preflight(gw, ALLOWED)), {});
    const key = (await gw.issueKey()).secret;
    assert.deepEqual(corsHeaders(await gw.call('GET', '/models', { key, headers: { origin: ALLOWED } })), {});
  });
});
