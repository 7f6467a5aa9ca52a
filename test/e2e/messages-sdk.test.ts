// The Anthropic Messages API end to end (product.md §14): the official @anthropic-ai/sdk, pointed at a real
// `tollgate serve` as Claude Code is (ANTHROPIC_BASE_URL = the gateway's origin), against a mock Anthropic
// upstream that checks what the real API checks (thinking signatures, tool ids). Create and stream, a tool
// round trip, thinking echoed byte for byte, 1-hour cache writes priced apart, count_tokens for free, both
// key headers, the §14 refusals as the SDK's typed errors without retries, the upstream's own 400, none of
// its rate-limit headers, the bytes forwarded, and a cut stream estimated within its hold.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import Anthropic, { APIError, BadRequestError, PaymentRequiredError, RateLimitError } from '@anthropic-ai/sdk';
import { assertLedgerSettled, holdOf, ledgerKinds, usageRows } from '../support/ledger-check.js';
import { startE2E, stopE2E, waitFor, type E2E, type Json } from '../support/e2e.js';
import type { CreatedKey } from '../support/gateway-process.js';
import { anthropicError, ANTHROPIC_UPSTREAM_HEADERS, startMockAnthropic, type MockAnthropic } from '../support/mock-anthropic.js';
import { claudeCostNano, CLAUDE_MAX_OUTPUT, CLAUDE_PRICES, messagesConfig } from '../support/messages-config.js';
import { cutAfter, slowDrip, toolResultText } from '../support/mock-upstream.js';
import { usdToNano } from '../support/money.js';

const WEATHER_TOOL = { name: 'get_weather', description: 'Current weather for a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };

describe('Anthropic Messages through the gateway, with the official SDK', () => {
  let e: E2E;
  let anthropic: MockAnthropic;
  let key: CreatedKey;
  /** Requests the SDK sent to the gateway (its retries included). */
  let sent = 0;

  const sdk = (secret: string, options: { bearer?: boolean; maxRetries?: number } = {}) =>
    new Anthropic({
      ...(options.bearer ? { apiKey: null, authToken: secret } : { apiKey: secret, authToken: null }),
      baseURL: e.gw.origin,
      maxRetries: options.maxRetries ?? 2,
      timeout: 20_000,
      fetch: (url: string | URL | Request, init?: RequestInit) => {
        sent += 1;
        return fetch(url, init);
      },
    });

  before(async () => {
    anthropic = await startMockAnthropic();
    e = await startE2E((mock) => messagesConfig(mock, anthropic));
    key = await e.gw.createKey({ name: 'claude-code', balance: 5 });
  });
  after(async () => {
    await anthropic?.close();
    await stopE2E(e);
  });
  beforeEach(() => {
    anthropic.reset();
    sent = 0;
  });

  test('create and stream answer as Anthropic does, with usage.cost, charged exactly, with x-api-key or Bearer', async () => {
    for (const bearer of [false, true]) {
      const client = sdk(key.key, { bearer });
      const message = await client.messages.create({ model: 'claude-test', max_tokens: 200, messages: [{ role: 'user', content: 'Say hello.' }] });
      assert.equal(message.content[0]?.type === 'text' && message.content[0].text, 'Hello from the mock Anthropic server.');
      const usage = message.usage as unknown as Json;
      assert.equal(usdToNano(usage.cost), claudeCostNano(usage));
      assert.equal(anthropic.requests.at(-1)!.headers['x-api-key'] !== key.key, true);

      const stream = client.messages.stream({ model: 'claude-test', max_tokens: 200, messages: [{ role: 'user', content: 'Say hello.' }] });
      let deltaUsage: Json;
      for await (const event of stream) if (event.type === 'message_delta') deltaUsage = event.usage;
      const final = await stream.finalMessage();
      assert.equal(final.content[0]?.type === 'text' && final.content[0].text, 'Hello from the mock Anthropic server.');
      assert.equal(usdToNano(deltaUsage.cost), claudeCostNano({ ...deltaUsage, input_tokens: 21 }));
    }
    const rows = await usageRows(e.gw, key.id);
    assert.equal(rows.length, 4);
    for (const row of rows) assert.deepEqual([row.status, row.usage_source, (row as Json).endpoint], [200, 'upstream', 'messages']);
    assertLedgerSettled(e.gw, key.id);
  });

  test('a tool_use → tool_result round trip, created and streamed', async () => {
    const client = sdk(key.key);
    for (const streamed of [false, true]) {
      const ask = { model: 'claude-test', max_tokens: 300, tools: [WEATHER_TOOL], messages: [{ role: 'user' as const, content: 'Weather in Paris?' }] };
      const first = streamed ? await client.messages.stream(ask).finalMessage() : await client.messages.create(ask);
      assert.equal(first.stop_reason, 'tool_use');
      const call = first.content.find((block) => block.type === 'tool_use');
      assert.ok(call && call.type === 'tool_use' && call.name === 'get_weather' && call.id.startsWith('toolu_'));
      const next = {
        ...ask,
        messages: [...ask.messages, { role: 'assistant' as const, content: first.content }, { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: call.id, content: 'Sunny, 24 °C' }] }],
      };
      const answer = streamed ? await client.messages.stream(next).finalMessage() : await client.messages.create(next);
      assert.equal(answer.content[0]?.type === 'text' && answer.content[0].text, toolResultText('Sunny, 24 °C'));
      assert.ok(anthropic.requests.at(-1)!.rawBody.includes(`"tool_use_id":"${call.id}"`), 'the tool id reached the upstream as the client sent it');
    }
  });

  test('thinking comes back with its signature, and the next turn echoes it byte for byte', async () => {
    const client = sdk(key.key);
    const ask = { model: 'claude-test', max_tokens: 2000, thinking: { type: 'enabled' as const, budget_tokens: 1024 }, tools: [WEATHER_TOOL], messages: [{ role: 'user' as const, content: 'Weather in Paris?' }] };
    const first = await client.messages.stream(ask).finalMessage();
    const thinking = first.content[0];
    assert.ok(thinking?.type === 'thinking' && thinking.signature.length > 0);
    const call = first.content.find((block) => block.type === 'tool_use');
    assert.ok(call?.type === 'tool_use');
    // The mock refuses a thinking block whose signature does not match its text, as Anthropic does.
    const answer = await client.messages.create({
      ...ask,
      messages: [...ask.messages, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Rain' }] }],
    });
    assert.equal(answer.content.at(-1)?.type === 'text' && answer.content.at(-1)!.type, 'text');
    assert.ok(anthropic.requests.at(-1)!.rawBody.includes(`"signature":${JSON.stringify(thinking.signature)}`));
  });

  test('1-hour cache writes are billed at cache_write_1h, 5-minute ones at cache_write, reads at cached_input', async () => {
    anthropic.cache = { read: 500, creation: 3000, creation1h: 1000 };
    const client = sdk(key.key);
    const system = [{ type: 'text' as const, text: 'You are Claude Code. '.repeat(200), cache_control: { type: 'ephemeral' as const, ttl: '1h' as const } }];
    const { data: message, response } = await client.messages.create({ model: 'claude-test', max_tokens: 100, system, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    const usage = message.usage as unknown as Json;
    assert.deepEqual(usage.cache_creation, { ephemeral_5m_input_tokens: 2000, ephemeral_1h_input_tokens: 1000 });
    // 21 × $3 + 500 × $0.30 + 2000 × $3.75 + 1000 × $6 + 9 × $15, per 1M tokens.
    const expected = 21 * 3000 + 500 * 300 + 2000 * 3750 + 1000 * 6000 + 9 * 15000;
    assert.equal(claudeCostNano(usage), expected);
    assert.equal(usdToNano(usage.cost), expected);
    const requestId = response.headers.get('x-request-id')!;
    const row = (await usageRows(e.gw, key.id)).find((r) => r.request_id === requestId) as Json;
    assert.deepEqual([row.input_tokens, row.cached_input_tokens, row.cache_write_tokens, usdToNano(row.cost)], [3521, 500, 3000, expected]);
    // The hold priced the system prompt (before the 1-hour marker) at the 1-hour write price.
    const hold = holdOf(e.gw, requestId)!.amount;
    assert.ok(hold > 100 * CLAUDE_PRICES.output * 1000 + 1000 * CLAUDE_PRICES.cacheWrite1h * 1000, `hold ${hold}`);
  });

  test('countTokens is answered by the upstream and leaves no ledger entry', async () => {
    const client = sdk(key.key);
    const before = ledgerKinds(e.gw, key.id).length;
    const counted = await client.messages.countTokens({ model: 'claude-test', messages: [{ role: 'user', content: 'How many tokens?' }] });
    assert.deepEqual(counted, { input_tokens: 1001 });
    assert.equal(ledgerKinds(e.gw, key.id).length, before);
    assert.equal(anthropic.requests.at(-1)!.path, '/v1/messages/count_tokens');
  });

  test('a 402 is the SDK PaymentRequiredError, not retried (x-should-retry: false), with the figures', async () => {
    const poor = await e.gw.createKey({ name: 'poor', balance: '0.00001' });
    const error = await sdk(poor.key, { maxRetries: 3 })
      .messages.create({ model: 'claude-test', max_tokens: 1000, messages: [{ role: 'user', content: 'Hi' }] })
      .then(
        () => assert.fail('a key without the balance was served'),
        (thrown: unknown) => thrown,
      );
    assert.ok(error instanceof PaymentRequiredError, String(error));
    assert.equal(error.status, 402);
    assert.equal(error.headers?.get('x-should-retry'), 'false');
    const body = error.error as Json;
    assert.equal(body.error.type, 'billing_error');
    assert.match(body.error.message, /^Insufficient balance: this request needs a hold of \$[\d.]+ but the key has \$0\.00001 available/);
    assert.deepEqual(Object.keys(body.error.metadata).sort(), ['affordable_max_tokens', 'available', 'hold']);
    assert.equal(sent, 1, 'the SDK did not retry');
    assert.equal(anthropic.requests.length, 0);
  });

  test('a spent budget is a RateLimitError with an integer retry-after, not retried', async () => {
    const capped = await e.gw.cli(['keys', 'create', '--name', 'capped', '--balance', '5', '--budget', '0.000001', '--budget-period', 'month', '--json']);
    assert.equal(capped.code, 0, capped.stderr);
    const secret = (JSON.parse(capped.stdout) as { key: string }).key;
    const error = await sdk(secret, { maxRetries: 3 })
      .messages.create({ model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] })
      .then(
        () => assert.fail('served over budget'),
        (thrown: unknown) => thrown,
      );
    assert.ok(error instanceof RateLimitError, String(error));
    assert.match(error.headers?.get('retry-after') ?? '', /^\d+$/);
    assert.ok(Number(error.headers?.get('retry-after')) > 0);
    assert.equal(error.headers?.get('x-should-retry'), 'false');
    assert.match((error.error as Json).error.message, /monthly budget, which resets at /);
    assert.equal(sent, 1, 'the SDK did not retry');
  });

  test("the upstream's own 400 reaches the SDK verbatim; none of its rate-limit headers reach the client", async () => {
    const upstream = anthropicError(400, 'invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum');
    anthropic.handle(upstream);
    const error = await sdk(key.key)
      .messages.create({ model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] })
      .then(
        () => assert.fail('served'),
        (thrown: unknown) => thrown,
      );
    assert.ok(error instanceof BadRequestError);
    assert.deepEqual(error.error, upstream.json);
    assert.equal(sent, 1);
    anthropic.handle(null);
    const { response } = await sdk(key.key).messages.create({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    for (const name of Object.keys(ANTHROPIC_UPSTREAM_HEADERS)) assert.equal(response.headers.get(name), null, name);
    for (const [name] of response.headers) assert.doesNotMatch(name, /^anthropic-ratelimit-/);
    assert.ok(error instanceof APIError && error.headers && !error.headers.get('anthropic-ratelimit-requests-remaining'));
  });

  test('the bytes the upstream received hash to what the client sent with only the model replaced', async () => {
    const body =
      `{"model":"claude-test","max_tokens":${CLAUDE_MAX_OUTPUT},"stream":true,` +
      '"system":[{"type":"text","text":"You are Claude Code."},{"type":"text","text":"Repository rules…","cache_control":{"type":"ephemeral"}}],' +
      '"tools":[{"name":"Read","description":"Reads a file","input_schema":{"type":"object","properties":{"path":{"type":"string"}}},"cache_control":{"type":"ephemeral","ttl":"1h"}}],' +
      '"messages":[{"role":"user","content":[{"type":"text","text":"Read \\"README.md\\" \\u2014 please"}]}],' +
      '"metadata":{"user_id":"user_abc_account__session_123"},"context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]}}';
    const res = await fetch(`${e.gw.origin}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14' },
      body,
    });
    assert.equal(res.status, 200);
    await res.text();
    const received = anthropic.requests.at(-1)!;
    const sha = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
    assert.equal(sha(received.rawBytes), sha(body.replace('"model":"claude-test"', '"model":"claude-sonnet-4-5"')));
    assert.equal(received.headers['anthropic-beta'], 'claude-code-20250219,interleaved-thinking-2025-05-14');
    assert.equal(received.headers.authorization, undefined);
  });

  test('a stream cut by the upstream is estimated: more than zero, never above its hold, on the input message_start reported', async () => {
    // message_start, content_block_start, ping and two text deltas, then the connection drops.
    anthropic.handle(cutAfter(5));
    const res = await fetch(`${e.gw.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-test', max_tokens: 1000, stream: true, messages: [{ role: 'user', content: 'Say hello.' }] }),
    });
    const text = await res.text();
    assert.equal(res.status, 200);
    assert.match(text, /event: error\ndata: \{"type":"error","error":\{"type":"api_error"/);
    const requestId = res.headers.get('x-request-id')!;
    const row = await waitFor(async () => (await usageRows(e.gw, key.id)).find((r) => r.request_id === requestId));
    assert.ok(row);
    const hold = holdOf(e.gw, requestId)!.amount;
    const cost = usdToNano(row.cost);
    assert.equal(row.usage_source, 'estimated');
    assert.equal(row.input_tokens, 21, 'the input message_start reported');
    assert.ok(row.output_tokens > 0);
    assert.ok(cost > 0 && cost <= hold, `0 < ${cost} <= ${hold}`);
    assert.equal(cost, 21 * 3000 + row.output_tokens * 15000);
    assertLedgerSettled(e.gw, key.id);
  });

  test('a client that leaves mid-stream is charged the estimate of what it was sent (499), within the hold', async () => {
    anthropic.handle(slowDrip(150));
    const controller = new AbortController();
    const res = await fetch(`${e.gw.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-test', max_tokens: 1000, stream: true, messages: [{ role: 'user', content: 'Say hello.' }] }),
      signal: controller.signal,
    });
    const requestId = res.headers.get('x-request-id')!;
    const reader = res.body!.getReader();
    let seen = '';
    while (!seen.includes('text_delta')) seen += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    const row = await waitFor(async () => (await usageRows(e.gw, key.id)).find((r) => r.request_id === requestId), 5_000);
    assert.ok(row);
    const cost = usdToNano(row.cost);
    assert.deepEqual([row.status, row.usage_source, row.input_tokens], [499, 'estimated', 21]);
    assert.ok(row.output_tokens > 0, 'bytes of output were sent: never an estimate of nothing');
    assert.ok(cost > 0 && cost <= holdOf(e.gw, requestId)!.amount);
    assertLedgerSettled(e.gw, key.id);
  });
});
