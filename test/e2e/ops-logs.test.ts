// Logs (product.md §10): one JSON line per request; at every level, down to trace, no key secret, no
// metrics token, no provider key, no prompt and no completion in anything the server writes (stdout and
// stderr) — and with `log.bodies: true` the request body (prompt) and a non-stream answer are logged,
// with secret-looking fields in them censored, still without any secret.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, postChat, type Json } from '../support/e2e.js';
import { mockConfig, startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { DEFAULT_TEXT, errorReply, startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { postStream, sleep } from '../support/resilience.js';

const PROMPT = 'PROMPT-the-secret-recipe-4711';
const METRICS_TOKEN = 'metrics-token-do-not-log-0123456789';
const WRONG_TOKEN = 'wrong-metrics-token-do-not-log-987';
const PROVIDER_KEY = 'sk-mock-upstream-secret';
const SMUGGLED = 'sk-smuggled-client-field-secret';
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
    gw = await startGateway({ config: mockConfig(mock, `metrics:\n  token: ${METRICS_TOKEN}\n`), env: { TOLLGATE_LOG_LEVEL: 'trace' } });
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

    const byId = await accessLines(gw, ids);
    for (const id of ids) assert.equal(byId.get(id)?.length, 1, `one access line for ${id}`);
    const statusOf = (i: number) => byId.get(ids[i]!)![0]!.status;
    assert.deepEqual(ids.map((_, i) => statusOf(i)), [200, 200, 402, 401, 200, 429, 400, 200, 401, 200]);
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
    for (const secret of [rich.key, poor.key, revoked.key, limited.key, METRICS_TOKEN, WRONG_TOKEN, PROVIDER_KEY, SMUGGLED, PROMPT, DEFAULT_TEXT]) {
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
