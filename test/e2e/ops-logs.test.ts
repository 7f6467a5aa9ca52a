// Logs (product.md §10): one JSON line per request; at every level, down to trace, no key secret (issued
// by the CLI or the admin API), no admin or metrics token, no provider key, no prompt and no completion in anything the server writes (stdout and
// stderr) — and with `log.bodies: true` the request body (prompt) and a non-stream answer are logged,
// with secret-looking fields in them censored, still without any secret. A request line is at warn when
// the gateway answered 5xx (info otherwise) and says who asked: the client address (X-Forwarded-For only
// with server.trust_proxy) and the user agent.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { call, extendConfig, postChat, type Json } from '../support/e2e.js';
import { mockConfig, startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { DEFAULT_TEXT, errorReply, startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { postStream, sleep } from '../support/resilience.js';

const PROMPT = 'PROMPT-the-secret-recipe-4711';
const METRICS_TOKEN = 'metrics-token-do-not-log-0123456789';
const WRONG_TOKEN = 'wrong-metrics-token-do-not-log-987';
const PROVIDER_KEY = 'sk-mock-upstream-secret';
const SMUGGLED = 'sk-smuggled-client-field-secret';
const ADMIN_TOKEN = 'admin-token-do-not-log-0123456789abcdefghij';
const WRONG_ADMIN_TOKEN = 'wrong-admin-token-do-not-log-0123456789abcd';
const messages = [{ role: 'user', content: PROMPT }];

interface LogLine {
  level: number;
  msg: string;
  requestId?: string;
  [field: string]: Json;
}

/** Every line the server wrote (stderr and stdout); each stderr line must be JSON. */
function output(gw: GatewayProcess): { text: string; lines: LogLine[] } {
  const lines = gw.logs.map((line) => {
    try {
      return JSON.parse(line) as LogLine;
    } catch {
      return assert.fail(`a log line that is not JSON: ${line}`);
    }
  });
  return { text: `${gw.logs.join('\n')}\n${gw.stdout()}`, lines };
}

/** Waits until the access line of each request id has been written (a request is logged when it ends). */
async function accessLines(gw: GatewayProcess, requestIds: string[]): Promise<Map<string, LogLine[]>> {
  for (let i = 0; ; i++) {
    const byId = new Map<string, LogLine[]>();
    for (const line of output(gw).lines) {
      if (line.msg === 'request' && line.requestId) byId.set(line.requestId, [...(byId.get(line.requestId) ?? []), line]);
    }
    if (requestIds.every((id) => byId.has(id)) || i > 200) return byId;
    await sleep(25);
  }
}

describe('logs at trace level, log.bodies off (the default)', () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;
  before(async () => {
    mock = await startMockUpstream();
    gw = await startGateway({
      config: mockConfig(mock, `metrics:\n  token: ${METRICS_TOKEN}\nadmin:\n  token: ${ADMIN_TOKEN}\n`),
      env: { TOLLGATE_LOG_LEVEL: 'trace' },
    });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
  });

  test('one access line per request; no secret, prompt or completion anywhere in the output', async () => {
    const rich = await gw.createKey({ name: 'rich', balance: 5 });
    const poor = await gw.createKey({ name: 'poor', balance: '0.000001' });
    const revoked = await gw.createKey({ name: 'revoked', balance: 5 });
    assert.equal((await gw.cli(['keys', 'revoke', revoked.id])).code, 0);
    const limited = await gw.createKey({ name: 'limited', balance: 5 });
    assert.equal((await gw.cli(['keys', 'set-limits', limited.id, '--rpm', '1'])).code, 0);
    const ids: string[] = [];
    const track = (res: { headers: Headers } | { requestId: string }) => ids.push('requestId' in res ? res.requestId : res.headers.get('x-request-id')!);

    const ok = await postChat(gw, rich.key, { model: 'gpt-test', messages, api_key: SMUGGLED });
    assert.equal(ok.status, 200);
    assert.equal(ok.json.choices[0].message.content, DEFAULT_TEXT);
    track(ok);
    const stream = await postStream(gw, rich.key, { model: 'gpt-test', messages });
    assert.equal(stream.status, 200);
    track(stream);
    track(await postChat(gw, poor.key, { model: 'gpt-test', messages }));
    track(await postChat(gw, revoked.key, { model: 'gpt-test', messages }));
    track(await postChat(gw, limited.key, { model: 'gpt-test', messages, max_tokens: 5 }));
    const refused = await postChat(gw, limited.key, { model: 'gpt-test', messages, max_tokens: 5 });
    assert.equal(refused.status, 429);
    track(refused);
    // An upstream that quotes the prompt back in its error: the client gets the message, the log does not.
    mock.handle(errorReply(400, `Invalid content: ${PROMPT}`));
    const rejected = await postChat(gw, rich.key, { model: 'gpt-test', messages });
    assert.equal(rejected.status, 400);
    assert.match(rejected.text, new RegExp(PROMPT));
    track(rejected);
    mock.handle(null);
    track(await call(gw, 'GET', '//metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }));
    track(await call(gw, 'GET', '//metrics', { headers: { authorization: `Bearer ${WRONG_TOKEN}` } }));
    track(await call(gw, 'GET', '/models', { key: rich.key }));
    // The admin API: a key issued (its secret is in the answer), a top-up, and a wrong token.
    const issued = await call(gw, 'POST', '//admin/v1/keys', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, body: { name: 'from-admin', balance: '1' } });
    assert.equal(issued.status, 200, issued.text);
    track(issued);
    const adminSecret: string = issued.json.key ?? issued.json.data?.key;
    assert.match(adminSecret, /^tg-/);
    const topUp = await call(gw, 'POST', `//admin/v1/keys/${rich.id}/topup`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'idempotency-key': 'webhook-1' },
      body: { amount: '1' },
    });
    assert.equal(topUp.status, 200, topUp.text);
    track(topUp);
    track(await call(gw, 'GET', '//admin/v1/keys', { headers: { authorization: `Bearer ${WRONG_ADMIN_TOKEN}` } }));

    const byId = await accessLines(gw, ids);
    for (const id of ids) assert.equal(byId.get(id)?.length, 1, `one access line for ${id}`);
    const statusOf = (i: number) => byId.get(ids[i]!)![0]!.status;
    assert.deepEqual(ids.map((_, i) => statusOf(i)), [200, 200, 402, 401, 200, 429, 400, 200, 401, 200, 200, 200, 401]);
    const okLine = byId.get(ids[0]!)![0]!;
    assert.equal(okLine.keyId, rich.id);
    assert.equal(okLine.model, 'gpt-test');
    assert.equal(okLine.provider, 'mock');
    assert.ok(okLine.inputTokens > 0 && okLine.outputTokens > 0 && okLine.cost > 0);
    assert.equal(byId.get(ids[5]!)![0]!.error, 'rate_limited');
    assert.equal(byId.get(ids[5]!)![0]!.limit, 'rpm');
    assert.ok(byId.get(ids[1]!)![0]!.firstTokenMs >= 0, 'a stream logs its time to first token');

    const { text, lines } = output(gw);
    assert.ok(lines.some((l) => l.level <= 20), 'debug/trace lines were written (the level is in force)');
    const secrets = [rich.key, poor.key, revoked.key, limited.key, adminSecret, ADMIN_TOKEN, WRONG_ADMIN_TOKEN, METRICS_TOKEN, WRONG_TOKEN, PROVIDER_KEY, SMUGGLED, PROMPT, DEFAULT_TEXT];
    for (const secret of secrets) {
      assert.ok(!text.includes(secret), `"${secret}" appears in the output`);
    }
    assert.doesNotMatch(text, /tg-[A-Za-z0-9_-]{20,}/, 'nothing shaped like a key secret');
    assert.doesNotMatch(text, /authorization/i);
  });
});

describe('logs with log.bodies: true and log.level from the config', () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;
  before(async () => {
    mock = await startMockUpstream();
    // TOLLGATE_LOG_LEVEL empty: the config's log.level applies.
    gw = await startGateway({ config: mockConfig(mock, 'log:\n  level: debug\n  bodies: true\n  format: json\n'), env: { TOLLGATE_LOG_LEVEL: '' } });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
  });

  test('the prompt and the non-stream answer are logged, secret fields censored, no key secret', async () => {
    const key = await gw.createKey({ balance: 5 });
    const ok = await postChat(gw, key.key, { model: 'gpt-test', messages, api_key: SMUGGLED });
    assert.equal(ok.status, 200);
    const health = await call(gw, 'GET', '//health');
    const id = ok.headers.get('x-request-id')!;
    const byId = await accessLines(gw, [id, health.headers.get('x-request-id')!]);
    const line = byId.get(id)![0]!;
    assert.equal(line.body.messages[0].content, PROMPT);
    assert.equal(line.body.api_key, '[redacted]', 'a secret-looking body field is censored');
    assert.equal(line.answer.choices[0].message.content, DEFAULT_TEXT);
    assert.equal(byId.get(health.headers.get('x-request-id')!)![0]!.level, 20, '/health is logged at debug, which the config enabled');
    const { text } = output(gw);
    for (const secret of [key.key, PROVIDER_KEY, SMUGGLED]) assert.ok(!text.includes(secret), `"${secret}" appears in the output`);
  });
});

const AGENT = 'ops-test-agent/1.0 (on-call)';
// A proxy in front would add the address it saw last; a client may write anything before that.
const FORWARDED = '203.0.113.7, 198.51.100.9';
const SOCKET_ADDRESS = /^(::ffff:)?127\.0\.0\.1$/;

describe('request lines: the level follows the status; the client address and user agent are on each', () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;
  before(async () => {
    mock = await startMockUpstream();
    // The default server.trust_proxy (off): X-Forwarded-For is the client's to write, so it is ignored.
    gw = await startGateway({ config: mockConfig(mock) });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
  });

  test('a 5xx answer is logged at warn, a 4xx and a 200 at info, each with clientIp and userAgent (X-Forwarded-For ignored)', async () => {
    const key = await gw.createKey({ balance: 5 });
    const headers = { 'user-agent': AGENT, 'x-forwarded-for': FORWARDED };
    const ok = await postChat(gw, key.key, { model: 'gpt-test', messages }, { headers });
    assert.equal(ok.status, 200);
    mock.handle(errorReply(500, 'upstream broke'));
    const failed = await postChat(gw, key.key, { model: 'gpt-test', messages }, { headers });
    mock.handle(null);
    assert.equal(failed.status, 502, failed.text);
    const unauthorized = await postChat(gw, 'tg-not-a-real-key-0123456789abcdefghij', { model: 'gpt-test', messages }, { headers });
    assert.equal(unauthorized.status, 401);
    const missing = await call(gw, 'GET', '/no-such-route', { key: key.key, headers });
    assert.equal(missing.status, 404);
    const ids = [ok, failed, unauthorized, missing].map((res) => res.headers.get('x-request-id')!);

    const byId = await accessLines(gw, ids);
    const found = ids.map((id) => byId.get(id)![0]!);
    assert.deepEqual(
      found.map((line) => [line.status, line.level]),
      [
        [200, 30],
        [502, 40],
        [401, 30],
        [404, 30],
      ],
    );
    for (const line of found) {
      assert.match(String(line.clientIp), SOCKET_ADDRESS, 'the socket address, not X-Forwarded-For');
      assert.equal(line.userAgent, AGENT);
    }
  });

  test('a user agent is cut to 256 characters; a request without one has none', async () => {
    const long = `agent/${'x'.repeat(600)}`;
    const res = await call(gw, 'GET', '//admin/v1/keys', { headers: { 'user-agent': long } });
    const id = res.headers.get('x-request-id')!;
    const line = (await accessLines(gw, [id])).get(id)![0]!;
    assert.equal(line.userAgent, long.slice(0, 256));

    const bare = await rawGet(gw, '/v1/models');
    const bareLine = (await accessLines(gw, [bare])).get(bare)![0]!;
    assert.equal(bareLine.status, 401);
    assert.equal('userAgent' in bareLine, false, `no userAgent field: ${JSON.stringify(bareLine)}`);
    assert.match(String(bareLine.clientIp), SOCKET_ADDRESS);
  });
});

describe('request lines with server.trust_proxy: 1', () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;
  before(async () => {
    mock = await startMockUpstream();
    // One proxy hop trusted: the address that proxy saw (the last entry), not what the client wrote before it.
    gw = await startGateway({ config: extendConfig(mockConfig(mock), { server: '  trust_proxy: 1' }) });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
  });

  test('the client address is the one the trusted proxy saw; without the header, the socket address', async () => {
    const key = await gw.createKey({ balance: 5 });
    const forwarded = await postChat(gw, key.key, { model: 'gpt-test', messages }, { headers: { 'user-agent': AGENT, 'x-forwarded-for': FORWARDED } });
    assert.equal(forwarded.status, 200);
    const plain = await postChat(gw, key.key, { model: 'gpt-test', messages }, { headers: { 'user-agent': AGENT } });
    const ids = [forwarded, plain].map((res) => res.headers.get('x-request-id')!);
    const byId = await accessLines(gw, ids);
    assert.equal(byId.get(ids[0]!)![0]!.clientIp, '198.51.100.9');
    assert.equal(byId.get(ids[0]!)![0]!.userAgent, AGENT);
    assert.match(String(byId.get(ids[1]!)![0]!.clientIp), SOCKET_ADDRESS);
  });
});

/** A GET with no header but Host (fetch always sends a user agent); returns the answer's request id. */
function rawGet(gw: GatewayProcess, path: string): Promise<string> {
  const { hostname, port } = new URL(gw.origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`));
    let text = '';
    socket.on('data', (data: Buffer) => (text += data.toString()));
    socket.on('error', reject);
    socket.on('close', () => {
      const id = /^x-request-id: (\S+)/im.exec(text)?.[1];
      if (id) resolve(id);
      else reject(new Error(`no request id in ${text}`));
    });
  });
}
