// POST /v1/messages through the in-process server (product.md §14), native cells: the client's bytes
// forwarded with only `model` replaced and its anthropic-* headers (never its credentials), the answer as
// the upstream gave it plus usage.cost, the stream passed through event by event with its cost on the
// final message_delta, the hold sized with cache-write prices, and every refusal in the Messages envelope
// with the statuses and headers of the §14 table. The official SDK and a real process: test/e2e/messages*.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { LightMyRequestResponse } from 'fastify';
import { startInProcess, type InProcessGateway } from '../../support/in-process.js';
import { anthropicError, anthropicErrorEvent, anthropicStreamEvents, ANTHROPIC_MOCK_KEY, ANTHROPIC_UPSTREAM_HEADERS, signatureFor, startMockAnthropic, type MockAnthropic } from '../../support/mock-anthropic.js';
import { messagesChatConfig } from '../../support/messages-chat-config.js';
import { CLAUDE_MAX_OUTPUT, CLAUDE_PRICES, CLAUDE_TOOL_OVERHEAD, claudeCostNano, messagesConfig } from '../../support/messages-config.js';
import { slowDrip } from '../../support/mock-upstream.js';
import { usdToNano } from '../../support/money.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are arbitrary JSON
type Json = any;

const USER = [{ role: 'user', content: 'Hi there' }];

/** The Messages error envelope, its status and error type; returns the body. */
function assertMessagesError(res: LightMyRequestResponse, status: number, type: string): Json {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const body = res.json<Json>();
  assert.equal(body.type, 'error', res.body);
  assert.equal(body.error.type, type, res.body);
  assert.equal(typeof body.error.message, 'string');
  assert.ok(body.error.message.length > 0);
  assert.equal(body.request_id, res.headers['x-request-id'], 'request_id is the gateway request id');
  return body;
}

/** SSE frames as [event, data] pairs, checking each has exactly one event line and one data line. */
function frames(text: string): Array<[string, string]> {
  assert.ok(text.endsWith('\n\n'), 'the stream ends on an event boundary');
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((frame) => {
      const lines = frame.split('\n');
      assert.equal(lines.length, 2, `one event and one data line: ${JSON.stringify(frame)}`);
      assert.match(lines[0]!, /^event: /);
      assert.match(lines[1]!, /^data: /);
      return [lines[0]!.slice(7), lines[1]!.slice(6)] as [string, string];
    });
}

describe('POST /v1/messages (in process)', () => {
  let gw: InProcessGateway;
  let anthropic: MockAnthropic;
  let key: string;
  let keyId: string;

  before(async () => {
    anthropic = await startMockAnthropic();
    gw = await startInProcess((mock) => messagesChatConfig(mock, anthropic));
    const issued = await gw.issueKey();
    key = issued.secret;
    keyId = issued.key.id;
  });
  after(async () => {
    await gw.close();
    await anthropic.close();
  });
  beforeEach(() => anthropic.reset());

  const post = (body: unknown, headers: Record<string, string> = {}, path = '/messages') => gw.call('POST', path, { key, body, headers });
  const balance = async (id = keyId) => (await gw.store.keys.get(id))!.balance;

  test('a message is answered as the upstream gave it, usage.cost added, and charged its exact usage', async () => {
    const before = await balance();
    const res = await post({ model: 'claude-test', max_tokens: 100, messages: USER });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json<Json>();
    assert.equal(body.type, 'message');
    assert.equal(body.content[0].text, 'Hello from the mock Anthropic server.');
    const { cost, ...usage } = body.usage;
    assert.deepEqual(usage, { input_tokens: 21, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 9, service_tier: 'standard' });
    assert.equal(usdToNano(cost), claudeCostNano(usage));
    assert.equal(await balance(), before - claudeCostNano(usage));
    const rows = await gw.store.usage.list({ keyId, limit: 100 });
    const row = rows.find((r) => r.requestId === res.headers['x-request-id'])!;
    assert.deepEqual([row.endpoint, row.status, row.usageSource, row.inputTokens, row.outputTokens, row.cost], ['messages', 200, 'upstream', 21, 9, claudeCostNano(usage)]);
  });

  test('the upstream receives the client bytes with only the model replaced, at /v1/messages, any query string ignored', async () => {
    // Odd spacing, key order, escapes, a signature and cache_control: none of it may change.
    const text =
      '{ "messages" : [{"role":"user","content":[{"type":"text","text":"caf\\u00e9 \\"quoted\\" \\\\ ok","cache_control":{"type":"ephemeral","ttl":"1h"}}]},' +
      `{"role":"assistant","content":[{"type":"thinking","thinking":"Hmm.","signature":"${signatureFor('Hmm.')}"},{"type":"text","text":"Yes."}]},` +
      '{"role":"user","content":"Go on"}],\n\t"model":"claude-test",  "max_tokens": 1.0e2, "system":[{"type":"text","text":"Be brief."}],"metadata":{"user_id":"u-1"} }';
    const res = await gw.call('POST', '/messages?beta=true', { key, body: text, headers: { 'content-type': 'application/json' } });
    assert.equal(res.statusCode, 200, res.body);
    const received = anthropic.requests.at(-1)!;
    assert.equal(received.url, '/v1/messages');
    const expected = text.replace('"model":"claude-test"', '"model":"claude-sonnet-4-5"');
    assert.equal(received.rawBody, expected);
    const hash = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
    assert.equal(hash(received.rawBytes), hash(Buffer.from(expected)));
    // Sent as pieces around the new model, with their length: never chunked.
    assert.equal(received.headers['content-length'], String(Buffer.byteLength(expected)));
    assert.equal(received.headers['transfer-encoding'], undefined);
  });

  test("a recorded Claude Code turn (parsed member by member, its blocks remembered) reaches the upstream byte for byte, twice; its hold the same each time", async () => {
    const recorded = readFileSync(new URL('../../fixtures/agents/claude-code-2.1.197-turn1.json', import.meta.url));
    const text = recorded.toString('utf8');
    const model = (JSON.parse(text) as { model: string }).model;
    const body = text.replace(`"model":"${model}"`, '"model":"claude-test"').replace('"stream":true', '"stream":false');
    const expected = Buffer.from(body.replace('"model":"claude-test"', '"model":"claude-sonnet-4-5"'));
    const quotes: unknown[] = [];
    for (let turn = 0; turn < 2; turn++) {
      const res = await gw.call('POST', '/messages?beta=true', { key, body, headers: { 'content-type': 'application/json' } });
      assert.equal(res.statusCode, 200, res.body);
      const received = anthropic.requests.at(-1)!;
      assert.ok(received.rawBytes.equals(expected), `turn ${turn + 1}: the client's bytes, only model replaced`);
      assert.equal(received.headers['content-length'], String(expected.length));
      const quote = await gw.call('POST', '/messages', { key, body, headers: { 'content-type': 'application/json', 'x-tollgate-dry-run': '1' } });
      assert.equal(quote.statusCode, 200, quote.body);
      const { hold, input_tokens } = quote.json<Json>();
      quotes.push({ hold, input_tokens });
    }
    assert.deepEqual(quotes[1], quotes[0], 'the hold sized from remembered blocks is the hold sized from parsed ones');
  });

  test('a large body with a poisoned key, invalid JSON or nesting past the limit is a 400 in the Messages envelope before any hold or upstream call', async () => {
    const before = await balance();
    const padding = 'x'.repeat(20_000);
    const bodies = [
      `{"model":"claude-test","max_tokens":10,"system":"${padding}","messages":[{"role":"user","content":[{"type":"text","text":"hi","__proto__":{"admin":true}}]}]}`,
      `{"model":"claude-test","max_tokens":10,"system":"${padding}","messages":[{"role":"user","content":"hi"},]}`,
      `{"model":"claude-test","max_tokens":10,"system":"${padding}","metadata":${'['.repeat(200)}${']'.repeat(200)},"messages":[{"role":"user","content":"hi"}]}`,
    ];
    for (const body of bodies) assertMessagesError(await gw.call('POST', '/messages', { key, body, headers: { 'content-type': 'application/json' } }), 400, 'invalid_request_error');
    assert.equal(anthropic.requests.length, 0);
    assert.equal(await balance(), before);
  });

  test('anthropic-* headers are forwarded as sent, anthropic-version defaults, and no client credential goes upstream', async () => {
    await post({ model: 'claude-test', max_tokens: 10, messages: USER }, { 'anthropic-beta': 'interleaved-thinking-2025-05-14,context-management-2025-06-27', 'anthropic-custom-x': 'kept', cookie: 'session=secret' });
    let headers = anthropic.requests.at(-1)!.headers;
    assert.equal(headers['anthropic-version'], '2023-06-01');
    assert.equal(headers['anthropic-beta'], 'interleaved-thinking-2025-05-14,context-management-2025-06-27');
    assert.equal(headers['anthropic-custom-x'], 'kept');
    assert.equal(headers['x-api-key'], ANTHROPIC_MOCK_KEY, 'the provider key, signed by the transport');
    assert.equal(headers.authorization, undefined);
    assert.equal(headers.cookie, undefined);
    // A key in x-api-key (Anthropic's SDK) and a client-chosen version.
    const res = await gw.call('POST', '/messages', { headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' }, body: { model: 'claude-test', max_tokens: 10, messages: USER } });
    assert.equal(res.statusCode, 200, res.body);
    headers = anthropic.requests.at(-1)!.headers;
    assert.equal(headers['x-api-key'], ANTHROPIC_MOCK_KEY);
    assert.ok(!JSON.stringify(anthropic.requests.map((r) => r.headers)).includes(key), 'the Tollgate key never reached the upstream');
  });

  test('upstream rate-limit and request-id headers never reach the client', async () => {
    const res = await post({ model: 'claude-test', max_tokens: 10, messages: USER });
    assert.equal(res.statusCode, 200);
    const streamed = await post({ model: 'claude-test', max_tokens: 10, messages: USER, stream: true });
    anthropic.handle(anthropicError(400, 'invalid_request_error', 'bad', { ...ANTHROPIC_UPSTREAM_HEADERS }));
    const failed = await post({ model: 'claude-test', max_tokens: 10, messages: USER });
    assert.equal(failed.statusCode, 400);
    for (const answer of [res, streamed, failed]) {
      for (const name of Object.keys(answer.headers)) {
        assert.ok(!/^(anthropic-ratelimit-|x-ratelimit-|request-id$)/.test(name), `${name} reached the client`);
      }
    }
  });

  test('a stream passes every upstream event through unchanged and ends with usage.cost on the final message_delta', async () => {
    const before = await balance();
    const body = { model: 'claude-test', max_tokens: 2000, messages: USER, stream: true, thinking: { type: 'enabled', budget_tokens: 1024 } };
    const res = await post(body);
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^text\/event-stream/);
    const got = frames(res.body);
    const sent = anthropicStreamEvents({ ...body, model: 'claude-sonnet-4-5' });
    assert.deepEqual(got.map(([event]) => event), sent.map((e) => (typeof e === 'string' ? '' : e.event)));
    // Every frame but the final message_delta is byte-identical, ids aside (the mock numbers its messages).
    const normalise = (data: string) => data.replace(/msg_mock\d+/g, 'msg_ID');
    got.forEach(([event, data], index) => {
      const original = sent[index] as { data: string };
      if (event !== 'message_delta') assert.equal(normalise(data), normalise(original.data), `frame ${index} (${event})`);
    });
    const delta = JSON.parse(got.find(([event]) => event === 'message_delta')![1]);
    const { cost, ...usage } = delta.usage;
    const upstreamDelta = sent.find((e) => typeof e !== 'string' && e.event === 'message_delta') as { data: string };
    assert.deepEqual(usage, JSON.parse(upstreamDelta.data).usage);
    assert.equal(usdToNano(cost), claudeCostNano(usage));
    assert.equal(got.at(-1)![0], 'message_stop');
    assert.equal(await balance(), before - claudeCostNano(usage));
  });

  test('an error event in the middle of a stream ends it with that event, as the upstream sent it', async () => {
    const events = anthropicStreamEvents({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: USER });
    const error = anthropicErrorEvent('overloaded_error', 'Overloaded');
    anthropic.handle({ sse: [...events.slice(0, 5), error] });
    const res = await post({ model: 'claude-test', max_tokens: 10, messages: USER, stream: true });
    assert.equal(res.statusCode, 200);
    const got = frames(res.body);
    assert.deepEqual(got.at(-1), ['error', (error as { data: string }).data]);
    assert.ok(!got.some(([event]) => event === 'message_stop'));
  });

  test('a request without max_tokens is a 400 before any hold or upstream call', async () => {
    const before = await balance();
    const res = await post({ model: 'claude-test', messages: USER });
    const body = assertMessagesError(res, 400, 'invalid_request_error');
    assert.match(body.error.message, /max_tokens/);
    for (const bad of [{ model: 'claude-test', max_tokens: 0, messages: USER }, { model: 'claude-test', max_tokens: 10, messages: [] }, { model: 'claude-test', max_tokens: 10 }, { max_tokens: 10, messages: USER }]) {
      assertMessagesError(await post(bad), 400, 'invalid_request_error');
    }
    assert.equal(anthropic.requests.length, 0);
    assert.equal(await balance(), before);
  });

  test('a bad key is 401 authentication_error, an unknown model 404 not_found_error, a model with no Messages cell (Gemini) 400', async () => {
    const bad = await gw.call('POST', '/messages', { headers: { 'x-api-key': 'tg-not-a-real-key' }, body: { model: 'claude-test', max_tokens: 10, messages: USER } });
    assertMessagesError(bad, 401, 'authentication_error');
    assertMessagesError(await post({ model: 'no-such-model', max_tokens: 10, messages: USER }), 404, 'not_found_error');
    const geminiOnly = assertMessagesError(await post({ model: 'gemini-test', max_tokens: 10, messages: USER }), 400, 'invalid_request_error');
    assert.match(geminiOnly.error.message, /not served on this endpoint; it is served on \/v1\/chat\/completions/);
    assert.equal(anthropic.requests.length + gw.mock.requests.length, 0);
  });

  test('a balance that does not cover the hold is 402 billing_error with x-should-retry: false and the figures', async () => {
    const poor = await gw.issueKey({ name: 'poor', balance: 1_000 });
    const res = await gw.call('POST', '/messages', { key: poor.secret, body: { model: 'claude-test', max_tokens: 1000, messages: USER } });
    const body = assertMessagesError(res, 402, 'billing_error');
    assert.equal(res.headers['x-should-retry'], 'false');
    assert.deepEqual(Object.keys(body.error.metadata).sort(), ['affordable_max_tokens', 'available', 'hold']);
    assert.equal(usdToNano(body.error.metadata.available), 1_000);
    assert.equal(anthropic.requests.length, 0);
  });

  test('a spent budget is 429 billing_error with x-should-retry: false, an integer retry-after to the reset, and a message naming both', async () => {
    const capped = await gw.issueKey({ name: 'capped', limits: { budget: '0.000001', budget_period: 'day' } });
    const res = await gw.call('POST', '/messages', { key: capped.secret, body: { model: 'claude-test', max_tokens: 100, messages: USER } });
    const body = assertMessagesError(res, 429, 'billing_error');
    assert.equal(res.headers['x-should-retry'], 'false');
    const retryAfter = String(res.headers['retry-after']);
    assert.match(retryAfter, /^\d+$/);
    const midnight = new Date();
    midnight.setUTCHours(24, 0, 0, 0);
    const expected = Math.ceil((midnight.getTime() - Date.now()) / 1000);
    assert.ok(Math.abs(Number(retryAfter) - expected) <= 5, `retry-after ${retryAfter} ≈ ${expected} s to the next UTC midnight`);
    assert.match(body.error.message, /daily budget, which resets at \d{4}-\d\d-\d\dT00:00:00\.000Z/);
    assert.equal(anthropic.requests.length, 0);
  });

  test('a key over its rpm gets 429 rate_limit_error with retry-after', async () => {
    const limited = await gw.issueKey({ name: 'limited', limits: { rpm: 1 } });
    const call = () => gw.call('POST', '/messages', { key: limited.secret, body: { model: 'claude-test', max_tokens: 10, messages: USER } });
    assert.equal((await call()).statusCode, 200);
    const res = await call();
    assertMessagesError(res, 429, 'rate_limit_error');
    assert.match(String(res.headers['retry-after']), /^\d+$/);
    assert.equal(res.headers['x-should-retry'], undefined, 'a rate limit may be retried');
  });

  test('an upstream 4xx reaches the client verbatim, status and body; nothing is charged', async () => {
    const before = await balance();
    const upstream = anthropicError(400, 'invalid_request_error', 'messages.1.content.0: Invalid `signature` in `thinking` block');
    anthropic.handle(upstream);
    const res = await post({ model: 'claude-test', max_tokens: 10, messages: USER });
    assert.equal(res.statusCode, 400);
    assert.equal(res.body, JSON.stringify(upstream.json));
    anthropic.handle(anthropicError(413, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.'));
    const large = await post({ model: 'claude-test', max_tokens: 10, messages: USER, stream: true });
    assert.equal(large.statusCode, 413);
    assert.equal(large.json<Json>().error.message, 'Request exceeds the maximum allowed number of bytes.');
    assert.equal(await balance(), before);
  });

  test('an overloaded upstream answers 529 overloaded_error as it said so; a failed one 502 with its own body; a proxy page in the envelope', async () => {
    const overloaded = anthropicError(529, 'overloaded_error', 'Overloaded');
    anthropic.handle(overloaded);
    let res = await post({ model: 'claude-test', max_tokens: 10, messages: USER });
    assert.equal(res.statusCode, 529);
    assert.equal(res.body, JSON.stringify(overloaded.json));
    assert.equal(anthropic.requests.length, 2, 'retried once (retries: 1) before giving up');
    const internal = anthropicError(500, 'api_error', 'Internal server error');
    anthropic.handle(internal);
    res = await post({ model: 'claude-test', max_tokens: 10, messages: USER });
    assert.equal(res.statusCode, 502);
    assert.equal(res.body, JSON.stringify(internal.json));
    anthropic.handle({ status: 502, body: '<html>Bad Gateway</html>' });
    res = await post({ model: 'claude-test', max_tokens: 10, messages: USER });
    assertMessagesError(res, 502, 'api_error');
    // The gateway's own upstream account: never passed on as the client's problem.
    anthropic.handle(anthropicError(401, 'authentication_error', 'invalid x-api-key'));
    res = await post({ model: 'claude-test', max_tokens: 10, messages: USER });
    const body = assertMessagesError(res, 502, 'api_error');
    assert.match(body.error.message, /refused the gateway's credentials/);
  });

  test('server tools are refused naming the tool, unless the model allows them', async () => {
    const webSearch = { type: 'web_search_20250305', name: 'web_search', max_uses: 3 };
    let res = await post({ model: 'claude-test', max_tokens: 10, messages: USER, tools: [{ name: 'get_weather', input_schema: { type: 'object' } }, webSearch] });
    let body = assertMessagesError(res, 400, 'invalid_request_error');
    assert.match(body.error.message, /'web_search' \(type web_search_20250305\)/);
    for (const field of ['mcp_servers', 'container']) {
      res = await post({ model: 'claude-test', max_tokens: 10, messages: USER, [field]: field === 'container' ? 'container_abc' : [{ type: 'url', url: 'https://mcp.example.com', name: 'x' }] });
      body = assertMessagesError(res, 400, 'invalid_request_error');
      assert.match(body.error.message, new RegExp(`'${field}'`));
    }
    assert.equal(anthropic.requests.length, 0);
    res = await post({ model: 'claude-servers', max_tokens: 10, messages: USER, tools: [webSearch] });
    assert.equal(res.statusCode, 200, res.body);
  });

  test('the hold prices the prompt up to the last cache_control marker at cache_write_1h when a marker asks for 1 h', async () => {
    const system = [{ type: 'text', text: 'You are a careful assistant. '.repeat(40), cache_control: { type: 'ephemeral', ttl: '1h' } }];
    const quote = async (body: Json) => {
      const res = await post(body, { 'x-tollgate-dry-run': '1' });
      assert.equal(res.statusCode, 200, res.body);
      return res.json<Json>();
    };
    const base = { model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'Summarise the rules.' }] };
    const plain = await quote({ ...base, system: [{ type: 'text', text: system[0]!.text }] });
    const cached1h = await quote({ ...base, system });
    const cached5m = await quote({ ...base, system: [{ ...system[0], cache_control: { type: 'ephemeral' } }] });
    assert.equal(plain.input_tokens, cached1h.input_tokens);
    const output = 100 * CLAUDE_PRICES.output * 1000;
    assert.equal(usdToNano(plain.hold), plain.input_tokens * CLAUDE_PRICES.input * 1000 + output);
    // The prefix (the system prompt) at its write price, the message after the marker at the input price.
    const prefix1h = (usdToNano(cached1h.hold) - output - plain.input_tokens * CLAUDE_PRICES.input * 1000) / ((CLAUDE_PRICES.cacheWrite1h - CLAUDE_PRICES.input) * 1000);
    const prefix5m = (usdToNano(cached5m.hold) - output - plain.input_tokens * CLAUDE_PRICES.input * 1000) / ((CLAUDE_PRICES.cacheWrite - CLAUDE_PRICES.input) * 1000);
    assert.equal(prefix1h, prefix5m);
    assert.ok(Number.isInteger(prefix1h) && prefix1h > 200 && prefix1h < plain.input_tokens, `prefix ${prefix1h} of ${plain.input_tokens}`);
    assert.equal(anthropic.requests.length, 0, 'a dry run calls no upstream');
  });

  test('tool definitions add the model tool_overhead_tokens to the input estimate', async () => {
    const base = { model: 'claude-test', max_tokens: 10, messages: USER };
    const tools = [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }];
    const without = (await post(base, { 'x-tollgate-dry-run': '1' })).json<Json>().input_tokens;
    const withTools = (await post({ ...base, tools }, { 'x-tollgate-dry-run': '1' })).json<Json>().input_tokens;
    assert.ok(withTools - without > CLAUDE_TOOL_OVERHEAD && withTools - without < CLAUDE_TOOL_OVERHEAD + 60, `${withTools} - ${without}`);
  });

  test('a clamp lowers max_tokens and the thinking budget below it (the body is then re-serialised), and says so', async () => {
    const hold = async (maxTokens: number) => usdToNano((await post({ model: 'claude-test', max_tokens: maxTokens, messages: USER }, { 'x-tollgate-dry-run': '1' })).json<Json>().hold);
    // Enough for about 1,500 output tokens.
    const poor = await gw.issueKey({ name: 'clamp', balance: (await hold(1500)) + 10 });
    const thinking = { type: 'enabled', budget_tokens: 3000 };
    const res = await gw.call('POST', '/messages', {
      key: poor.secret,
      headers: { 'x-tollgate-max-tokens': 'clamp' },
      body: { model: 'claude-test', max_tokens: CLAUDE_MAX_OUTPUT, thinking, messages: USER },
    });
    assert.equal(res.statusCode, 200, res.body);
    const clamped = Number(res.headers['x-tollgate-max-tokens-clamped']);
    assert.ok(clamped >= 1500 && clamped < 1510, `clamped to ${clamped}`);
    const sent = anthropic.requests.at(-1)!.body;
    assert.equal(sent.max_tokens, clamped);
    assert.deepEqual(sent.thinking, { type: 'enabled', budget_tokens: clamped - 1 });
    assert.equal(sent.model, 'claude-sonnet-4-5');
    // Below 1,025 the manual thinking budget cannot fit (Anthropic's minimum is 1,024): it is dropped.
    const poorer = await gw.issueKey({ name: 'clamp-2', balance: (await hold(600)) + 10 });
    const res2 = await gw.call('POST', '/messages', { key: poorer.secret, headers: { 'x-tollgate-max-tokens': 'clamp' }, body: { model: 'claude-test', max_tokens: 3000, thinking, messages: USER } });
    assert.equal(res2.statusCode, 200, res2.body);
    assert.equal(anthropic.requests.at(-1)!.body.thinking, undefined);
    assert.ok(anthropic.requests.at(-1)!.body.max_tokens < 1025);
  });

  test('a dry run quotes without an upstream call; an Idempotency-Key replays the answer and bills once', async () => {
    const quote = await post({ model: 'claude-test', max_tokens: 100, messages: USER }, { 'x-tollgate-dry-run': '1' });
    assert.equal(quote.statusCode, 200);
    assert.equal(quote.json<Json>().object, 'quote');
    assert.equal(anthropic.requests.length, 0);
    const before = await balance();
    const body = { model: 'claude-test', max_tokens: 100, messages: USER, stream: true };
    const first = await post(body, { 'idempotency-key': 'claude-turn-1' });
    const second = await post(body, { 'idempotency-key': 'claude-turn-1' });
    assert.equal(first.statusCode, 200);
    assert.equal(second.statusCode, 200);
    assert.equal(second.body, first.body, 'the replay is the same stream');
    assert.equal(anthropic.requests.length, 1);
    const cost = usdToNano(JSON.parse(frames(first.body).find(([e]) => e === 'message_delta')![1]).usage.cost);
    assert.equal(await balance(), before - cost);
    const mismatch = await post({ ...body, max_tokens: 99 }, { 'idempotency-key': 'claude-turn-1' });
    assertMessagesError(mismatch, 422, 'invalid_request_error');
  });
});

describe('POST /v1/messages/count_tokens (in process)', () => {
  let gw: InProcessGateway;
  let anthropic: MockAnthropic;

  before(async () => {
    anthropic = await startMockAnthropic();
    gw = await startInProcess((mock) => messagesChatConfig(mock, anthropic));
  });
  after(async () => {
    await gw.close();
    await anthropic.close();
  });
  beforeEach(() => anthropic.reset());

  test('is forwarded to the Anthropic upstream and answered with its count, holding and charging nothing', async () => {
    const issued = await gw.issueKey();
    const res = await gw.call('POST', '/messages/count_tokens?beta=true', { key: issued.secret, body: { model: 'claude-test', messages: USER, system: 'Be brief.' }, headers: { 'anthropic-beta': 'token-counting-2024-11-01' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { input_tokens: 1001 });
    const received = anthropic.requests.at(-1)!;
    assert.equal(received.url, '/v1/messages/count_tokens');
    assert.equal(received.body.model, 'claude-sonnet-4-5');
    assert.equal(received.headers['anthropic-beta'], 'token-counting-2024-11-01');
    assert.equal(received.headers['x-api-key'], ANTHROPIC_MOCK_KEY);
    const key = (await gw.store.keys.get(issued.key.id))!;
    assert.deepEqual([key.balance, key.held], [issued.key.balance, 0]);
    assert.deepEqual(await gw.store.usage.list({ keyId: issued.key.id, limit: 10 }), [], 'no usage row');
  });

  test('falls back to the local estimate when the upstream fails, and passes on its 400', async () => {
    const issued = await gw.issueKey();
    anthropic.handle(anthropicError(500, 'api_error', 'boom'));
    const res = await gw.call('POST', '/messages/count_tokens', { key: issued.secret, body: { model: 'claude-test', messages: USER } });
    assert.equal(res.statusCode, 200, res.body);
    const { input_tokens: estimate } = res.json<Json>();
    assert.ok(Number.isInteger(estimate) && estimate > 0 && estimate < 50, `estimate ${estimate}`);
    const upstream = anthropicError(400, 'invalid_request_error', 'messages.0.content: Field required');
    anthropic.handle(upstream);
    const refused = await gw.call('POST', '/messages/count_tokens', { key: issued.secret, body: { model: 'claude-test', messages: USER } });
    assert.equal(refused.statusCode, 400);
    assert.equal(refused.body, JSON.stringify(upstream.json));
  });

  test('counts toward rpm only, and refuses in the Messages envelope', async () => {
    const limited = await gw.issueKey({ name: 'rpm', limits: { rpm: 2 }, balance: 0 });
    const call = (body: unknown = { model: 'claude-test', messages: USER }) => gw.call('POST', '/messages/count_tokens', { key: limited.secret, body });
    assert.equal((await call()).statusCode, 200, 'a key with no balance may count tokens');
    assert.equal((await call()).statusCode, 200);
    const res = await call();
    assert.equal(res.statusCode, 429);
    assert.equal(res.json<Json>().error.type, 'rate_limit_error');
    const issued = await gw.issueKey();
    const bad = await gw.call('POST', '/messages/count_tokens', { key: issued.secret, body: { model: 'claude-test' } });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json<Json>().type, 'error');
    const unknown = await gw.call('POST', '/messages/count_tokens', { key: issued.secret, body: { model: 'nope', messages: USER } });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json<Json>().error.type, 'not_found_error');
  });
});

describe('POST /v1/messages with growing holds (in process)', () => {
  const STEP = 16;
  let gw: InProcessGateway;
  let anthropic: MockAnthropic;

  before(async () => {
    anthropic = await startMockAnthropic();
    gw = await startInProcess((mock) => messagesConfig(mock, anthropic, `billing:\n  hold_mode: growing\n  growing_step_tokens: ${STEP}\n`));
  });
  after(async () => {
    await gw.close();
    await anthropic.close();
  });

  test('a stream the key cannot cover ends like a max_tokens stop, its open block closed, charged the estimate within the hold', async () => {
    const events = anthropicStreamEvents({ model: 'claude-sonnet-4-5', max_tokens: 1000, messages: USER }) as Array<{ event: string; data: string }>;
    const words = Array.from({ length: 200 }, (_, i) => ({ event: 'content_block_delta', data: JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `word${i} ` } }) }));
    // message_start, the text block's start and a ping, then 200 words and no end: the hold must stop it.
    anthropic.handle(slowDrip(2, { sse: [...events.slice(0, 3), ...words, ...events.slice(-3)] }));
    const quote = (await gw.call('POST', '/messages', { key: (await gw.issueKey()).secret, body: { model: 'claude-test', max_tokens: 1000, messages: USER, stream: true }, headers: { 'x-tollgate-dry-run': '1' } })).json<Json>();
    // The first step's hold and one more step: never the 200 words.
    const poor = await gw.issueKey({ name: 'growing', balance: usdToNano(quote.hold) + STEP * CLAUDE_PRICES.output * 1000 });
    const res = await gw.call('POST', '/messages', { key: poor.secret, body: { model: 'claude-test', max_tokens: 1000, messages: USER, stream: true } });
    assert.equal(res.statusCode, 200);
    const got = frames(res.body);
    assert.deepEqual(got.slice(-3).map(([event]) => event), ['content_block_stop', 'message_delta', 'message_stop']);
    const delta = JSON.parse(got.at(-2)![1]);
    assert.deepEqual(delta.delta, { stop_reason: 'max_tokens', stop_sequence: null });
    const sentWords = got.filter(([event]) => event === 'content_block_delta').length;
    assert.ok(sentWords > 0 && sentWords < 200, `${sentWords} words streamed`);
    const row = (await gw.store.usage.list({ keyId: poor.key.id, limit: 10 })).find((r) => r.requestId === res.headers['x-request-id'])!;
    assert.equal(row.usageSource, 'estimated');
    assert.equal(row.inputTokens, 21, 'the input message_start reported');
    assert.equal(usdToNano(delta.usage.cost), row.cost);
    assert.ok(row.cost > 0 && row.cost <= poor.key.balance, `${row.cost} within the balance`);
    const key = (await gw.store.keys.get(poor.key.id))!;
    assert.deepEqual([key.held, key.balance], [0, poor.key.balance - row.cost]);
  });
});
