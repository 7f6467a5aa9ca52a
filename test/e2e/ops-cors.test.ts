// server.cors_origins (product.md §10): a listed origin's preflight is answered (the headers the
// official SDKs send allowed, any other header not) before key auth, and its call carries
// Access-Control-Allow-Origin; any other origin — and every origin when the list is empty — gets no
// CORS header at all.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertChatOk, extendConfig } from '../support/e2e.js';
import { mockConfig, startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';

const ALLOWED = 'https://app.example.com';
const OTHER = 'https://evil.example.net';
const body = { model: 'gpt-test', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 20 };

function corsHeaders(res: Response): Record<string, string> {
  return Object.fromEntries([...res.headers].filter(([name]) => name.startsWith('access-control-')));
}

const preflight = (gw: GatewayProcess, origin: string, path = '/chat/completions', requestHeaders = 'authorization,content-type') =>
  fetch(`${gw.baseURL}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': requestHeaders },
  });

/** Access-Control-Allow-Headers of a preflight answer, as lower-cased names. */
const allowedHeaders = (res: Response): string[] =>
  (res.headers.get('access-control-allow-headers') ?? '')
    .toLowerCase()
    .split(/\s*,\s*/)
    .filter((name) => name.length > 0);

const post = (gw: GatewayProcess, origin: string, key: string) =>
  fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { origin, authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

async function asRaw(res: Response) {
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: JSON.parse(text) };
}

describe('CORS with server.cors_origins', () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;
  let key: string;
  before(async () => {
    mock = await startMockUpstream();
    gw = await startGateway({ config: extendConfig(mockConfig(mock), { server: `  cors_origins: ["${ALLOWED}", "http://localhost:5173"]` }) });
    key = (await gw.createKey({ balance: 5 })).key;
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
  });

  test("a listed origin's preflight is answered 204 with Authorization and Content-Type allowed, without a key", async () => {
    mock.reset();
    const res = await preflight(gw, ALLOWED);
    assert.equal(res.status, 204);
    const headers = corsHeaders(res);
    assert.equal(headers['access-control-allow-origin'], ALLOWED);
    assert.match(headers['access-control-allow-methods'] ?? '', /\bPOST\b/);
    const allowed = (headers['access-control-allow-headers'] ?? '').toLowerCase().split(/\s*,\s*/);
    assert.ok(allowed.includes('authorization') && allowed.includes('content-type'), `allowed headers: ${allowed.join(', ')}`);
    assert.ok(Number(headers['access-control-max-age']) > 0);
    assert.match(res.headers.get('vary') ?? '', /origin/i, 'answers vary by Origin (caches must not mix them)');
    assert.equal(mock.requests.length, 0, 'a preflight never reaches an upstream');
    // The second listed origin too.
    assert.equal(corsHeaders(await preflight(gw, 'http://localhost:5173', '/models'))['access-control-allow-origin'], 'http://localhost:5173');
  });

  test("a listed origin's preflight allows the headers the official SDKs send: X-Stainless-*, Idempotency-Key, X-Tollgate-*, anthropic-*, x-api-key, api-key", async () => {
    const requested = [
      'authorization',
      'content-type',
      'idempotency-key',
      'x-api-key',
      'api-key',
      'x-stainless-os',
      'x-stainless-lang',
      'x-stainless-package-version',
      'x-stainless-runtime',
      'x-stainless-runtime-version',
      'x-stainless-arch',
      'x-stainless-retry-count',
      'x-stainless-timeout',
      'x-stainless-helper-method',
      'x-tollgate-dry-run',
      'x-tollgate-max-tokens',
      'anthropic-version',
      'anthropic-beta',
      'anthropic-dangerous-direct-browser-access',
    ];
    // Browsers send the names lower-cased and sorted; any case and spacing is accepted.
    const res = await preflight(gw, ALLOWED, '/chat/completions', `${requested.slice(0, 3).join(',')}, X-Stainless-OS ,${requested.slice(6).join(',')}, X-API-Key,api-key`);
    assert.equal(res.status, 204);
    const allowed = allowedHeaders(res);
    for (const name of requested) assert.ok(allowed.includes(name), `${name} is allowed (allowed: ${allowed.join(', ')})`);
    assert.match(res.headers.get('vary') ?? '', /access-control-request-headers/i, 'the answer varies with the requested headers');
  });

  test('a preflight that asks for any other header does not get it allowed, so the browser refuses the call', async () => {
    const res = await preflight(gw, ALLOWED, '/chat/completions', 'authorization,content-type,x-evil,cookie,x-stainlessfake,x-forwarded-for');
    assert.equal(res.status, 204);
    const allowed = allowedHeaders(res);
    assert.deepEqual(allowed, ['authorization', 'content-type'], 'only the allowed names are echoed');
    // Asking only for unknown headers: none are allowed.
    const none = await preflight(gw, ALLOWED, '/chat/completions', 'x-evil');
    assert.equal(none.headers.get('access-control-allow-headers'), null);
  });

  test("a listed origin's call succeeds with Access-Control-Allow-Origin and the readable headers exposed", async () => {
    const res = await post(gw, ALLOWED, key);
    assertChatOk(await asRaw(res), 'gpt-test');
    const headers = corsHeaders(res);
    assert.equal(headers['access-control-allow-origin'], ALLOWED);
    const exposed = (headers['access-control-expose-headers'] ?? '').split(/\s*,\s*/);
    for (const name of ['x-request-id', 'retry-after', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-tokens', 'x-tollgate-max-tokens-clamped']) {
      assert.ok(exposed.includes(name), `${name} is exposed (exposed: ${exposed.join(', ')})`);
    }
    // An error answer carries it too, so the page can read the error.
    const denied = await fetch(`${gw.baseURL}/models`, { headers: { origin: ALLOWED } });
    assert.equal(denied.status, 401);
    assert.equal(denied.headers.get('access-control-allow-origin'), ALLOWED);
  });

  test('another origin gets no CORS header: not on its preflight, not on its call', async () => {
    const pre = await preflight(gw, OTHER);
    await pre.text();
    assert.deepEqual(corsHeaders(pre), {});
    assert.notEqual(pre.status, 204);
    const res = await post(gw, OTHER, key);
    await res.text();
    assert.deepEqual(corsHeaders(res), {});
    // Nor does a near miss: another scheme, port or a suffix of the listed host.
    for (const origin of ['http://app.example.com', 'https://app.example.com:8443', 'https://app.example.com.evil.net', 'null']) {
      const r = await preflight(gw, origin);
      await r.text();
      assert.deepEqual(corsHeaders(r), {}, origin);
    }
  });
});

describe('CORS without server.cors_origins (the default)', () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;
  before(async () => {
    mock = await startMockUpstream();
    gw = await startGateway({ config: mockConfig(mock) });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
  });

  test('no origin gets a CORS header', async () => {
    const key = (await gw.createKey({ balance: 5 })).key;
    const pre = await preflight(gw, ALLOWED);
    await pre.text();
    assert.deepEqual(corsHeaders(pre), {});
    const res = await post(gw, ALLOWED, key);
    assert.equal(res.status, 200);
    await res.text();
    assert.deepEqual(corsHeaders(res), {});
  });
});
