// GET /metrics end to end (product.md §10): after a scripted mix of answers (200, 402, 429 rate_limited,
// an upstream 500, a stream) every series moves by exactly what that mix implies and nothing else moves;
// the exposition parses with a Prometheus text parser; the holds gauges read the ledger and the cool-down
// gauge the routing table; 1,000 requests naming random models add no label value; metrics.token guards
// the endpoint.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { assertChatOk, assertErrorResponse, call, costOf, extendConfig, parseJsonOutput, postChat, type Json } from '../support/e2e.js';
import { mockConfig, startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { chatChunks, errorReply, makeUsage, slowDrip, sseFromChunks, stall, startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { usdToNano } from '../support/money.js';
import { changes, delta, parseExposition, sampleId, scrape, type Scrape } from '../support/prometheus.js';
import { pool, postStream, sleep } from '../support/resilience.js';

const hello = [{ role: 'user', content: 'Hello' }];
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

/** Scrapes until `ready(scrape)` (a request's end is reported when its response closes, a moment after the client has it). */
async function scrapeWhen(gw: GatewayProcess, ready: (s: Scrape) => boolean, what: string, token?: string): Promise<Scrape> {
  for (let i = 0; ; i++) {
    const s = await scrape(gw, token);
    if (ready(s)) return s;
    if (i > 200) assert.fail(`metrics never showed ${what}`);
    await sleep(25);
  }
}

const requestsTotal = (s: Scrape) =>
  [...s.samples].filter(([id]) => id.startsWith('tollgate_requests_total{')).reduce((sum, [, v]) => sum + v, 0);

describe('GET /metrics', () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;

  before(async () => {
    mock = await startMockUpstream();
    const config = extendConfig(mockConfig(mock), {
      providers: `  cooling:\n    kind: openai-compatible\n    base_url: ${mock.url}\n    api_key: sk-mock-upstream-secret\n    retries: 0\n    cooldown: { failures: 1, seconds: 600 }`,
      models: `  cool-model:\n    upstreams: [{ provider: cooling, model: cool-upstream }]\n    price: { input: 1, output: 2 }\n    context_window: 8000\n    max_output_tokens: 100`,
    });
    gw = await startGateway({ config });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
  });

  async function key(name: string, balance: number | string, flags: string[] = []): Promise<{ id: string; key: string }> {
    return parseJsonOutput<Json>(await gw.cli(['keys', 'create', '--name', name, '--balance', String(balance), ...flags, '--json']), 'keys create');
  }

  test('the exposition parses, has every series of §10 with its type, and the process metrics', async () => {
    const s = await scrape(gw);
    const types = Object.fromEntries(s.types);
    for (const [name, type] of Object.entries({
      tollgate_requests_total: 'COUNTER',
      tollgate_request_duration_seconds: 'HISTOGRAM',
      tollgate_time_to_first_token_seconds: 'HISTOGRAM',
      tollgate_upstream_attempts_total: 'COUNTER',
      tollgate_tokens_total: 'COUNTER',
      tollgate_charged_usd_total: 'COUNTER',
      tollgate_holds_active: 'GAUGE',
      tollgate_held_usd: 'GAUGE',
      tollgate_rate_limited_total: 'COUNTER',
      tollgate_upstream_cooling: 'GAUGE',
      tollgate_ledger_write_seconds: 'HISTOGRAM',
      process_cpu_seconds_total: 'COUNTER',
      process_resident_memory_bytes: 'GAUGE',
      nodejs_eventloop_lag_seconds: 'GAUGE',
    })) {
      assert.equal(types[name], type, `${name} is a ${type}`);
    }
    // Per-model and per-provider series exist from the start, at 0, for every configured name.
    for (const model of ['gpt-test', 'gpt-reasoning', 'gpt-locked', 'embed-test', 'cool-model']) {
      for (const kind of ['input', 'cached_input', 'cache_write', 'output', 'reasoning']) {
        assert.ok(s.samples.has(sampleId('tollgate_tokens_total', { model, kind })), `tokens ${model}/${kind}`);
      }
      assert.ok(s.samples.has(sampleId('tollgate_charged_usd_total', { model })));
    }
    assert.equal(s.samples.get(sampleId('tollgate_upstream_cooling', { provider: 'mock', upstream_model: 'gpt-4o-mini' })), 0);
    assert.equal(s.samples.get(sampleId('tollgate_upstream_cooling', { provider: 'cooling', upstream_model: 'cool-upstream' })), 0);
    // A metrics body is text for Prometheus, not a JSON envelope, and never cached.
    const res = await call(gw, 'GET', '//metrics');
    assert.equal(res.headers.get('cache-control'), 'no-store');
  });

  test('a scripted mix (200, 429, 402, upstream 500, stream) moves each series by exactly its amount, and nothing else', async () => {
    const limited = await key('rpm-one', 10, ['--rpm', '1']);
    const plain = await key('plain', 10);
    const poor = await key('poor', '0.000001');
    const body = { model: 'gpt-test', messages: hello, max_tokens: 50 };
    mock.reset();
    const before = await scrape(gw);

    const ok = await postChat(gw, limited.key, body);
    const okCost = assertChatOk(ok, 'gpt-test');
    assertErrorResponse(await postChat(gw, limited.key, body), 429, 'rate_limited');
    assertErrorResponse(await postChat(gw, poor.key, body), 402, 'insufficient_balance');
    const stream = await postStream(gw, plain.key, body);
    assert.equal(stream.status, 200);
    const streamUsage = stream.chunks.at(-1).usage;
    mock.handle(errorReply(500, 'upstream broke'));
    assertErrorResponse(await postChat(gw, plain.key, body), 502, 'upstream_error');
    mock.handle(null);

    const after = await scrapeWhen(gw, (s) => requestsTotal(s) - requestsTotal(before) >= 5, 'the five requests');
    const inputTokens = ok.json.usage.prompt_tokens + streamUsage.prompt_tokens;
    const outputTokens = ok.json.usage.completion_tokens + streamUsage.completion_tokens;
    const chargedNano = okCost + costOf(streamUsage);
    const model = 'gpt-test';
    const expected: Record<string, number> = {
      [sampleId('tollgate_requests_total', { endpoint: 'chat_completions', model, provider: 'mock', status: '200' })]: 2,
      [sampleId('tollgate_requests_total', { endpoint: 'chat_completions', model, provider: 'none', status: '429' })]: 1,
      [sampleId('tollgate_requests_total', { endpoint: 'chat_completions', model, provider: 'none', status: '402' })]: 1,
      [sampleId('tollgate_requests_total', { endpoint: 'chat_completions', model, provider: 'mock', status: '502' })]: 1,
      [sampleId('tollgate_request_duration_seconds_count', { model })]: 5,
      [sampleId('tollgate_time_to_first_token_seconds_count', { model })]: 1,
      [sampleId('tollgate_tokens_total', { model, kind: 'input' })]: inputTokens,
      [sampleId('tollgate_tokens_total', { model, kind: 'output' })]: outputTokens,
      [sampleId('tollgate_upstream_attempts_total', { provider: 'mock', outcome: 'ok' })]: 2,
      // The 500 is retried once (retries: 1): two failed attempts.
      [sampleId('tollgate_upstream_attempts_total', { provider: 'mock', outcome: 'error' })]: 2,
      [sampleId('tollgate_rate_limited_total', { limit: 'rpm' })]: 1,
      // hold + settle (200), hold + settle (stream), a refused hold (402), hold + release (502); the 429 never reaches the ledger.
      tollgate_ledger_write_seconds_count: 7,
    };
    for (const [id, amount] of Object.entries(expected)) {
      const name = id.split('{')[0]!;
      const labels = Object.fromEntries([...(id.match(/(\w+)="([^"]*)"/g) ?? [])].map((pair) => pair.replace(/"/g, '').split('=')));
      assert.equal(delta(before, after, name, labels), amount, `${id} moved by ${amount}`);
    }
    const charged = delta(before, after, 'tollgate_charged_usd_total', { model });
    assert.equal(Math.round(charged * 1e9), chargedNano, 'charged USD is the exact sum of the two costs');
    assert.ok(chargedNano > 0);
    // Nothing else moved: only the samples above, the histograms' buckets and sums, and the charge.
    for (const id of Object.keys(changes(before, after))) {
      const allowed =
        id in expected ||
        id === sampleId('tollgate_charged_usd_total', { model }) ||
        /^tollgate_(request_duration_seconds|time_to_first_token_seconds|ledger_write_seconds)_(bucket|sum)\b/.test(id);
      assert.ok(allowed, `unexpected change: ${id} ${JSON.stringify(changes(before, after)[id])}`);
    }
    // Each histogram's +Inf bucket counts every observation.
    assert.equal(delta(before, after, 'tollgate_request_duration_seconds_bucket', { model, le: '+Inf' }), 5);
    assert.equal(after.samples.get('tollgate_holds_active'), 0);
    assert.equal(after.samples.get('tollgate_held_usd'), 0);
  });

  test('holds_active and held_usd read the ledger while a request is in flight', async () => {
    const holder = await key('holder', 10);
    mock.reset();
    mock.handle(stall());
    const controller = new AbortController();
    const pending = postChat(gw, holder.key, { model: 'gpt-test', messages: hello, max_tokens: 50 }, { signal: controller.signal }).catch(() => undefined);
    const during = await scrapeWhen(gw, (s) => s.samples.get('tollgate_holds_active') === 1, 'one active hold');
    const held = gw.audit(holder.id).held;
    assert.ok(held > 0);
    assert.equal(Math.round(during.samples.get('tollgate_held_usd')! * 1e9), held, 'held_usd is the hold, in USD');
    controller.abort();
    await pending;
    await scrapeWhen(gw, (s) => s.samples.get('tollgate_holds_active') === 0 && s.samples.get('tollgate_held_usd') === 0, 'no active hold');
    mock.handle(null);
  });

  test('a client that leaves mid-stream is counted once, as 499, with the tokens and charge its bill settled afterwards', async () => {
    const leaver = await key('leaver', 10);
    mock.reset();
    mock.handle(slowDrip(200, sseFromChunks(chatChunks({ content: ['one ', 'two ', 'three ', 'four ', 'five ', 'six'], usage: makeUsage(11, 6) }))));
    const before = await scrape(gw);
    const controller = new AbortController();
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${leaver.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: hello, max_tokens: 50, stream: true }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read(); // the first chunk arrived: the stream is committed
    controller.abort();
    const after = await scrapeWhen(gw, (s) => requestsTotal(s) - requestsTotal(before) >= 1, 'the request that was left');
    const rows = parseJsonOutput<Json[]>(await gw.cli(['usage', '--key', leaver.id, '--json']), 'usage');
    assert.equal(rows.length, 1);
    const row = rows[0];
    assert.equal(row.status, 499);
    assert.equal(delta(before, after, 'tollgate_requests_total', { endpoint: 'chat_completions', model: 'gpt-test', provider: 'mock', status: '499' }), 1);
    assert.equal(requestsTotal(after) - requestsTotal(before), 1, 'counted once');
    assert.equal(delta(before, after, 'tollgate_tokens_total', { model: 'gpt-test', kind: 'input' }), row.input_tokens);
    assert.equal(delta(before, after, 'tollgate_tokens_total', { model: 'gpt-test', kind: 'output' }), row.output_tokens);
    assert.equal(Math.round(delta(before, after, 'tollgate_charged_usd_total', { model: 'gpt-test' }) * 1e9), usdToNano(row.cost));
    assert.ok(row.input_tokens > 0);
    mock.handle(null);
  });

  test('upstream_cooling turns 1 for the (provider, upstream model) that cooled down, and only for it', async () => {
    const caller = await key('cooler', 10);
    mock.reset();
    mock.handle(errorReply(500, 'down'));
    assertErrorResponse(await postChat(gw, caller.key, { model: 'cool-model', messages: hello, max_tokens: 10 }), 502, 'upstream_error');
    mock.handle(null);
    const s = await scrape(gw);
    assert.equal(s.samples.get(sampleId('tollgate_upstream_cooling', { provider: 'cooling', upstream_model: 'cool-upstream' })), 1);
    assert.equal(s.samples.get(sampleId('tollgate_upstream_cooling', { provider: 'mock', upstream_model: 'gpt-4o-mini' })), 0);
  });

  test('1,000 requests naming random models add no label value (they count as model="unknown")', async () => {
    const caller = await key('random-models', 10);
    const randomModel = () => `model-${randomBytes(6).toString('hex')}`;
    const names: string[] = [];
    const send = async (i: number) => {
      const name = randomModel();
      names.push(name);
      const res =
        i % 2 === 0
          ? await postChat(gw, caller.key, { model: name, messages: hello, stream: i % 4 === 0 })
          : await call(gw, 'POST', '/embeddings', { key: caller.key, body: { model: name, input: 'hi' } });
      assertErrorResponse(res, 404, 'model_not_found');
    };
    // The first of each kind creates the "unknown" series; after that nothing may be added.
    await send(0);
    await send(1);
    const first = await scrapeWhen(gw, (s) => s.samples.get(sampleId('tollgate_request_duration_seconds_count', { model: 'unknown' })) === 2, 'the first two');
    await pool(998, 25, (i) => send(i + 2));
    const last = await scrapeWhen(gw, (s) => s.samples.get(sampleId('tollgate_request_duration_seconds_count', { model: 'unknown' })) === 1000, 'all 1,000');
    const series = (s: Scrape) => [...s.samples.keys()].filter((id) => id.startsWith('tollgate_')).sort();
    assert.deepEqual(series(last), series(first), 'the same series before and after');
    assert.equal(delta(first, last, 'tollgate_requests_total', { endpoint: 'chat_completions', model: 'unknown', provider: 'none', status: '404' }), 499);
    assert.equal(delta(first, last, 'tollgate_requests_total', { endpoint: 'embeddings', model: 'unknown', provider: 'none', status: '404' }), 499);
    assert.equal(names.length, 1000);
    for (const name of names) assert.ok(!last.text.includes(name), `${name} is not in the exposition`);
  });
});

describe('GET /metrics with metrics.token', () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;
  before(async () => {
    mock = await startMockUpstream();
    gw = await startGateway({ config: mockConfig(mock, `metrics:\n  token: ${METRICS_TOKEN}\n`) });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
  });

  test('401 invalid_metrics_token without the token or with another; 200 with it', async () => {
    for (const headers of [{} as Record<string, string>, { authorization: 'Bearer wrong-token-0123456789abcdef' }, { authorization: METRICS_TOKEN }, { authorization: `Basic ${METRICS_TOKEN}` }]) {
      const res = await call(gw, 'GET', '//metrics', { headers });
      assertErrorResponse(res, 401, 'invalid_metrics_token');
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer /);
      assert.doesNotMatch(res.text, /tollgate_requests_total/);
    }
    const s = await scrape(gw, METRICS_TOKEN);
    assert.ok(s.types.has('tollgate_requests_total'));
    // The client API's keys are not metrics tokens, and /health and /ready stay open.
    assert.equal((await call(gw, 'GET', '//health')).status, 200);
    assert.equal((await call(gw, 'GET', '//ready')).status, 200);
  });

  test('the parser refuses a malformed exposition (the check above can fail)', () => {
    assert.throws(() => parseExposition('# TYPE x counter\nx{a="1" 1\n'));
  });
});
