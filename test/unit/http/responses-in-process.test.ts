// POST /v1/responses in native cells, in process (the real server answered by inject, a mock OpenAI
// Responses upstream behind it): the client's bytes reach the upstream with only `model` replaced and no
// client credential; answers and every stream event pass through, with usage.cost on the answer and the
// one terminal event; the refusals of product.md §14's /v1/responses column; the stored-response state
// (previous_response_id, item_reference: 404 when unknown, pinned to the account that made it, its context
// held); input_tokens; dry run, clamp and Idempotency-Key as on chat. The SDKs' view: test/e2e/responses-*.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { LightMyRequestResponse } from 'fastify';
import { usdToNano } from '../../support/money.js';
import { assertErrorAnswer, startInProcess, type InProcessGateway } from '../../support/in-process.js';
import {
  makeResponsesUsage,
  mockDefault,
  openaiError,
  responsesConfig,
  responsesStreamReply,
  RESPONSES_BACKUP_KEY,
  RESPONSES_MOCK_KEY,
  responsesUsageFor,
  startMockResponses,
  UPSTREAM_HEADERS,
  type MockResponses,
} from '../../support/mock-responses.js';
import { assertMatchesSchema } from '../../support/openapi.js';
import { openSqliteFile } from '../../../src/storage/sqlite/driver.js';
import type { UsageRecord } from '../../../src/storage/types.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers and events are arbitrary JSON
type Json = any;

const INPUT = [{ role: 'user', content: 'Say hello.' }];
/** gpt-resp's prices in nano-dollars per token: input $1, cached $0.5, output $2 per 1M. */
const cost = (usage: { input_tokens: number; output_tokens: number; input_tokens_details?: { cached_tokens: number } }) => {
  const cached = usage.input_tokens_details?.cached_tokens ?? 0;
  return (usage.input_tokens - cached) * 1000 + cached * 500 + usage.output_tokens * 2000;
};
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The SSE events of a stream answer: their `event:` names and parsed data, each valid against ResponseStreamEvent. */
function eventsOf(text: string): { name: string | undefined; data: Json; raw: string }[] {
  assert.ok(text.endsWith('\n\n'), 'the stream ends on an event boundary');
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((frame) => {
      const lines = frame.split('\n');
      const name = lines[0]!.startsWith('event: ') ? lines.shift()!.slice('event: '.length) : undefined;
      assert.equal(lines.length, 1, `one data line: ${frame}`);
      const raw = lines[0]!.slice('data: '.length);
      const data = JSON.parse(raw);
      assertMatchesSchema('ResponseStreamEvent', data);
      if (name !== undefined) assert.equal(name, data.type, 'the event line names the event');
      return { name, data, raw };
    });
}

/** The request's usage row (a refusal's is written just after its answer: waited for). */
async function usageRow(gw: InProcessGateway, requestId: string): Promise<UsageRecord> {
  for (let tries = 0; ; tries++) {
    const row = (await gw.store.usage.list({ limit: 1000 })).find((r) => r.requestId === requestId);
    if (row) return row;
    assert.ok(tries < 100, `a usage row for ${requestId}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const requestIdOf = (res: LightMyRequestResponse) => String(res.headers['x-request-id']);

describe('POST /v1/responses, native cells (in process)', () => {
  let upstream: MockResponses;
  let gw: InProcessGateway;
  let key: string;
  let keyId: string;

  before(async () => {
    upstream = await startMockResponses();
    gw = await startInProcess(() => responsesConfig(upstream));
    const issued = await gw.issueKey({ name: 'main' });
    key = issued.secret;
    keyId = issued.key.id;
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  test('the upstream receives the exact bytes the client sent, only model replaced, and none of the client credentials', async () => {
    // Odd spacing, escapes, a number spelling and fields a parse-and-stringify would rewrite or reorder.
    const body =
      '{\n  "input" : [{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA\\/x+y=="},{"role":"developer","content":"caf\\u00e9 \u{1F600}"}],\n' +
      '  "model":"gpt-resp", "temperature": 1.0, "store":false, "include":["reasoning.encrypted_content"], "prompt_cache_key":"pck-1",\n' +
      '  "stream": false }';
    const res = await gw.call('POST', '/responses', { headers: { 'x-api-key': key, cookie: 'session=secret', 'content-type': 'application/json' }, body });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(upstream.requests.length, 1);
    const received = upstream.requests[0]!;
    assert.equal(received.path, '/v1/responses');
    assert.equal(sha256(received.rawBody), sha256(body.replace('"model":"gpt-resp"', '"model":"gpt-4o-mini"')), 'byte for byte, model replaced');
    assert.equal(received.headers.authorization, `Bearer ${RESPONSES_MOCK_KEY}`, "the gateway's own credential");
    for (const header of ['x-api-key', 'api-key', 'cookie']) assert.equal(received.headers[header], undefined, `no client ${header}`);
  });

  test('a recorded Codex turn (parsed member by member) reaches both accounts byte for byte when the first fails: the same pieces sent again', async () => {
    // Without its web_search tool (a server tool this model does not allow), re-serialised: 38 KB, its non-ASCII text raw.
    const recorded = JSON.parse(readFileSync(new URL('../../fixtures/agents/codex-0.171.0-turn1.json', import.meta.url), 'utf8')) as { tools: Array<{ type: string }> };
    const body = JSON.stringify({ ...recorded, model: 'gpt-pair', stream: false, tools: recorded.tools.filter((tool) => tool.type !== 'web_search') });
    assert.ok(Buffer.byteLength(body) > 30_000);
    upstream.handle((req) => (req.headers.authorization === `Bearer ${RESPONSES_MOCK_KEY}` ? openaiError(503, 'Overloaded.', { type: 'server_error' }) : mockDefault(upstream, req)));
    const res = await gw.call('POST', '/responses', { key, body, headers: { 'content-type': 'application/json' } });
    assert.equal(res.statusCode, 200, res.body);
    const expected = body.replace('"model":"gpt-pair"', '"model":"gpt-4o-mini"');
    assert.deepEqual(upstream.requests.map((r) => r.headers.authorization), [`Bearer ${RESPONSES_MOCK_KEY}`, `Bearer ${RESPONSES_BACKUP_KEY}`]);
    for (const received of upstream.requests) {
      assert.equal(sha256(received.rawBody), sha256(expected), `${received.headers.authorization}: byte for byte, model replaced`);
      assert.equal(received.headers['content-length'], String(Buffer.byteLength(expected)));
    }
  });

  test("azure-openai: the body goes to {endpoint}/openai/v1/responses with the deployment as model, the key in api-key", async () => {
    const res = await gw.call('POST', '/responses', { key, body: { model: 'gpt-azure', input: INPUT } });
    assert.equal(res.statusCode, 200, res.body);
    const received = upstream.requests[0]!;
    assert.equal(received.path, '/openai/v1/responses');
    assert.equal(received.body.model, 'my-gpt-deployment');
    assert.equal(received.headers['api-key'], RESPONSES_MOCK_KEY);
    assert.equal(received.headers.authorization, undefined);
  });

  test('a body the gateway changed (a clamp) is serialised again, with the upstream model', async () => {
    const issued = await gw.issueKey({ name: 'clamped', balance: 600_000 });
    const res = await gw.call('POST', '/responses', { key: issued.secret, headers: { 'x-tollgate-max-tokens': 'clamp' }, body: { model: 'gpt-resp', input: INPUT, max_output_tokens: 1000 } });
    assert.equal(res.statusCode, 200, res.body);
    const clamped = Number(res.headers['x-tollgate-max-tokens-clamped']);
    assert.ok(clamped >= 1 && clamped < 1000, `clamped to ${clamped}`);
    const sent = upstream.requests[0]!.body;
    assert.equal(sent.max_output_tokens, clamped, 'the clamp lowered max_output_tokens');
    assert.equal(sent.model, 'gpt-4o-mini');
    assert.deepEqual(sent.input, INPUT);
  });

  test('a whole answer: the upstream Response with usage.cost, the exact price of its usage; no upstream header reaches the client', async () => {
    const res = await gw.call('POST', '/responses', { key, body: { model: 'gpt-resp', input: INPUT } });
    assert.equal(res.statusCode, 200, res.body);
    const answer = res.json<Json>();
    assertMatchesSchema('Response', answer);
    assert.equal(answer.output[0].content[0].text, 'Hello from the mock Responses server.');
    const expected = responsesUsageFor({ model: 'gpt-4o-mini', input: INPUT });
    assert.deepEqual({ ...answer.usage, cost: undefined }, { ...expected, cost: undefined });
    assert.equal(usdToNano(answer.usage.cost), cost(expected));
    for (const header of Object.keys(UPSTREAM_HEADERS)) assert.equal(res.headers[header], undefined, `no ${header}`);
    const row = await usageRow(gw, requestIdOf(res));
    assert.equal(row.endpoint, 'responses');
    assert.equal(row.cost, cost(expected));
    assert.equal(row.usageSource, 'upstream');
    assert.equal(row.inputTokens, expected.input_tokens);
    assert.equal(row.outputTokens, expected.output_tokens);
  });

  test('canonical usage: cached input inside input_tokens is priced as cached, reasoning inside output_tokens once', async () => {
    const usage = makeResponsesUsage(100, 50, { cached: 40, reasoning: 30 });
    upstream.handle((req) => ({ ...mockDefault(upstream, req), ...{ json: { ...(mockDefault(upstream, req) as { json: Json }).json, usage } } }));
    const res = await gw.call('POST', '/responses', { key, body: { model: 'gpt-resp', input: INPUT } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(usdToNano(res.json<Json>().usage.cost), 60 * 1000 + 40 * 500 + 50 * 2000);
    const row = await usageRow(gw, requestIdOf(res));
    assert.deepEqual([row.inputTokens, row.cachedInputTokens, row.outputTokens, row.reasoningTokens], [100, 40, 50, 30]);
  });

  test('a stream: every upstream event passes through unchanged, event lines kept, the terminal one with usage.cost', async () => {
    const res = await gw.call('POST', '/responses', { key, body: { model: 'gpt-5-test', input: INPUT, stream: true, include: ['reasoning.encrypted_content'] } });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^text\/event-stream/);
    for (const header of Object.keys(UPSTREAM_HEADERS)) assert.equal(res.headers[header], undefined, `no ${header}`);
    const events = eventsOf(res.body);
    const types = events.map((e) => e.data.type);
    assert.equal(types[0], 'response.created');
    assert.equal(types.at(-1), 'response.completed');
    assert.equal(types.filter((t) => t.startsWith('response.completed')).length, 1);
    assert.deepEqual(events.map((e) => e.data.sequence_number), events.map((_, i) => i), 'sequence numbers as the upstream numbered them');
    // The upstream's own events, byte for byte, except the terminal one.
    const sent = upstream.requests[0]!;
    assert.equal(sent.body.model, 'o4-mini-reasoning');
    const terminal = events.at(-1)!.data;
    const usage = terminal.response.usage;
    assert.equal(usdToNano(usage.cost), cost(usage), 'usage.cost prices the usage exactly');
    assert.equal(usage.output_tokens_details.reasoning_tokens, 20);
    const reasoning = events.find((e) => e.data.type === 'response.output_item.done' && e.data.item.type === 'reasoning')!;
    assert.match(reasoning.data.item.encrypted_content, /^gAAAAB/, 'encrypted reasoning untouched');
    const row = await usageRow(gw, requestIdOf(res));
    assert.equal(row.cost, usdToNano(usage.cost));
    assert.equal(row.reasoningTokens, 20);
    assert.equal(row.endpoint, 'responses');
  });

  test('response.incomplete and response.failed are billed from their usage, like response.completed', async () => {
    for (const terminal of ['incomplete', 'failed'] as const) {
      const usage = makeResponsesUsage(70, 9);
      upstream.handle((req) => responsesStreamReply(req.body, { terminal, usage }));
      const res = await gw.call('POST', '/responses', { key, body: { model: 'gpt-resp', input: INPUT, stream: true } });
      const events = eventsOf(res.body);
      const last = events.at(-1)!.data;
      assert.equal(last.type, `response.${terminal}`);
      assert.equal(usdToNano(last.response.usage.cost), cost(usage));
      const row = await usageRow(gw, requestIdOf(res));
      assert.equal(row.cost, cost(usage), `${terminal}: charged its usage`);
      assert.equal(row.usageSource, 'upstream');
    }
  });

  test('a stream cut mid-way is estimated from the deltas it delivered (above zero, within the hold) and ends with response.failed', async () => {
    const quote = (await gw.call('POST', '/responses', { key, headers: { 'x-tollgate-dry-run': '1' }, body: { model: 'gpt-resp', input: INPUT, stream: true } })).json<Json>();
    upstream.handle((req) => ({ ...responsesStreamReply(req.body), cutAfter: 6 }));
    const res = await gw.call('POST', '/responses', { key, body: { model: 'gpt-resp', input: INPUT, stream: true } });
    const events = eventsOf(res.body);
    const last = events.at(-1)!.data;
    assert.equal(last.type, 'response.failed');
    assert.ok(events.some((e) => e.data.type === 'response.output_text.delta'), 'text was delivered before the cut');
    const row = await usageRow(gw, requestIdOf(res));
    assert.equal(row.usageSource, 'estimated');
    assert.ok(row.outputTokens > 0, 'the delivered text is counted');
    assert.ok(row.cost > 0 && row.cost <= usdToNano(quote.hold), `estimate ${row.cost} within the hold ${quote.hold}`);
    assert.equal(usdToNano(last.response.usage.cost), row.cost, 'the failed event carries the charge');
  });

  test('an upstream response.failed before any output and without usage is the upstream failing: 502, nothing charged', async () => {
    upstream.handle((req) => responsesStreamReply(req.body, { terminal: 'failed', usage: null, output: [] }));
    const res = await gw.call('POST', '/responses', { key, body: { model: 'gpt-resp', input: INPUT, stream: true } });
    assertErrorAnswer(res, 502, 'upstream_error');
    assert.equal((await usageRow(gw, requestIdOf(res))).cost, 0);
  });

  test('an upstream 400 reaches the client verbatim, status and body; a 500 is 502 upstream_error', async () => {
    const refusal = openaiError(400, "Unsupported parameter: 'temperature' is not supported with this model.", { param: 'temperature', code: 'unsupported_parameter' });
    upstream.handle(refusal);
    const res = await gw.call('POST', '/responses', { key, body: { model: 'gpt-resp', input: INPUT, temperature: 0.2 } });
    assert.equal(res.statusCode, 400);
    assert.equal(res.body, JSON.stringify(refusal.json), 'the upstream body as it came');
    for (const header of Object.keys(UPSTREAM_HEADERS)) assert.equal(res.headers[header], undefined, `no ${header}`);
    upstream.handle(openaiError(500, 'The server had an error.', { type: 'server_error' }));
    assertErrorAnswer(await gw.call('POST', '/responses', { key, body: { model: 'gpt-resp', input: INPUT } }), 502, 'upstream_error');
    upstream.handle(openaiError(400, 'Bad stream request.'));
    const streamed = await gw.call('POST', '/responses', { key, body: { model: 'gpt-resp', input: INPUT, stream: true } });
    assert.equal(streamed.statusCode, 400, 'a stream refused before it began is the upstream answer too');
    assert.equal(streamed.json<Json>().error.message, 'Bad stream request.');
  });

  test('400 invalid_request for what the flow relies on; background and conversation are unsupported_parameter; nothing reaches the upstream', async () => {
    const cases: Array<[Json, string, string | null]> = [
      [{ input: INPUT }, 'invalid_request', 'model'],
      [{ model: 'gpt-resp', input: 5 }, 'invalid_request', 'input'],
      [{ model: 'gpt-resp', input: ['hi'] }, 'invalid_request', 'input[0]'],
      [{ model: 'gpt-resp', input: INPUT, max_output_tokens: 0 }, 'invalid_request', 'max_output_tokens'],
      [{ model: 'gpt-resp', input: INPUT, stream: 'yes' }, 'invalid_request', 'stream'],
      [{ model: 'gpt-resp', input: INPUT, background: true }, 'unsupported_parameter', 'background'],
      [{ model: 'gpt-resp', input: INPUT, conversation: 'conv_1' }, 'unsupported_parameter', 'conversation'],
    ];
    for (const [body, code, param] of cases) {
      const error = assertErrorAnswer(await gw.call('POST', '/responses', { key, body }), 400, code);
      assert.equal(error.param, param, JSON.stringify(body));
    }
    assert.equal(upstream.requests.length, 0);
  });

  test("built-in tools are refused with 400 naming the tool, unless the model's allow_server_tools is set", async () => {
    const tools = [{ type: 'function', name: 'f', parameters: { type: 'object' } }, { type: 'web_search_preview' }];
    const error = assertErrorAnswer(await gw.call('POST', '/responses', { key, body: { model: 'gpt-resp', input: INPUT, tools } }), 400, 'unsupported_parameter');
    assert.equal(error.param, 'tools[1].type');
    assert.match(String(error.message), /web_search_preview/);
    assert.equal(upstream.requests.length, 0);
    const allowed = await gw.call('POST', '/responses', { key, body: { model: 'gpt-tools', input: INPUT, tools } });
    assert.equal(allowed.statusCode, 200, allowed.body);
  });

  test('a model no Responses cell reaches (Gemini, for now) is 400 model_not_supported_on_endpoint; unknown 404 model_not_found', async () => {
    const error = assertErrorAnswer(await gw.call('POST', '/responses', { key, body: { model: 'gemini-only', input: INPUT } }), 400, 'model_not_supported_on_endpoint');
    assert.match(String(error.message), /\/v1\/chat\/completions/);
    assertErrorAnswer(await gw.call('POST', '/responses', { key, body: { model: 'no-such-model', input: INPUT } }), 404, 'model_not_found');
    assertErrorAnswer(await gw.call('POST', '/responses', { body: { model: 'gpt-resp', input: INPUT } }), 401, 'invalid_api_key');
    assert.equal(upstream.requests.length, 0);
  });

  test('a balance short of the hold: 429 insufficient_quota (type and code), x-should-retry: false, the 402 metadata', async () => {
    const poor = (await gw.issueKey({ name: 'poor', balance: 1000 })).secret;
    const res = await gw.call('POST', '/responses', { key: poor, body: { model: 'gpt-resp', input: INPUT } });
    const error = assertErrorAnswer(res, 429, 'insufficient_quota');
    assert.equal(error.type, 'insufficient_quota');
    assert.equal(error.param, null, 'even no output fits: the input is the cause');
    const big = (await gw.issueKey({ name: 'almost', balance: 600_000 })).secret;
    const lower = assertErrorAnswer(await gw.call('POST', '/responses', { key: big, body: { model: 'gpt-resp', input: INPUT } }), 429, 'insufficient_quota');
    assert.equal(lower.param, 'max_output_tokens', "the cause named in this API's terms");
    assert.match(String(lower.message), /Lower max_output_tokens to \d+/);
    assert.equal(res.headers['x-should-retry'], 'false');
    assert.deepEqual(Object.keys(error.metadata as object).sort(), ['affordable_max_tokens', 'available', 'hold']);
    assert.equal(upstream.requests.length, 0);
    const row = await usageRow(gw, requestIdOf(res));
    assert.equal(row.errorCode, 'insufficient_balance', 'the row keeps the registry code, whatever the API called it');
    assert.equal(row.endpoint, 'responses');
  });

  test('a spent budget: 429 usage_limit_reached with code budget_exceeded and resets_at (Unix seconds), not retried', async () => {
    const capped = (await gw.issueKey({ name: 'capped', limits: { budget: '0.000001', budget_period: 'day' } })).secret;
    const res = await gw.call('POST', '/responses', { key: capped, body: { model: 'gpt-resp', input: INPUT } });
    const error = assertErrorAnswer(res, 429, 'budget_exceeded');
    assert.equal(error.type, 'usage_limit_reached');
    const nextDay = Math.ceil(Date.now() / 86_400_000) * 86_400;
    assert.equal(error.resets_at, nextDay, 'the next UTC midnight');
    assert.equal(res.headers['x-should-retry'], 'false');
    assert.ok(Number(res.headers['retry-after']) >= 1);
    assert.equal(upstream.requests.length, 0);
  });

  test('over the key rpm: 429 rate_limited with retry-after', async () => {
    const slow = (await gw.issueKey({ name: 'slow', limits: { rpm: 1 } })).secret;
    assert.equal((await gw.call('POST', '/responses', { key: slow, body: { model: 'gpt-resp', input: INPUT } })).statusCode, 200);
    const res = await gw.call('POST', '/responses', { key: slow, body: { model: 'gpt-resp', input: INPUT } });
    assertErrorAnswer(res, 429, 'rate_limited');
    assert.ok(Number(res.headers['retry-after']) >= 1);
  });

  test('a ledger that cannot be written: 503 ledger_unavailable with retry-after, and no upstream call', async () => {
    // Another connection holds SQLite's write lock until the answer arrives (the gateway waits 1 s for it).
    const db = openSqliteFile(gw.dbPath);
    let res: LightMyRequestResponse;
    try {
      db.exec('BEGIN EXCLUSIVE');
      res = await gw.call('POST', '/responses', { key, body: { model: 'gpt-resp', input: INPUT } });
    } finally {
      if (db.inTransaction) db.exec('ROLLBACK');
      db.close();
    }
    assertErrorAnswer(res, 503, 'ledger_unavailable');
    assert.ok(Number(res.headers['retry-after']) >= 1);
    assert.equal(upstream.requests.length, 0, 'fail closed');
  });

  test('a dry run answers a quote with the input count and the hold at the model max output; no hold, no upstream call', async () => {
    const res = await gw.call('POST', '/responses', { key, headers: { 'x-tollgate-dry-run': '1' }, body: { model: 'gpt-resp', input: INPUT } });
    assert.equal(res.statusCode, 200, res.body);
    const quote = res.json<Json>();
    assert.equal(quote.object, 'quote');
    assert.ok(quote.input_tokens > 0);
    assert.equal(usdToNano(quote.hold), quote.input_tokens * 1000 + 1000 * 2000, 'no max_output_tokens: the model max output (1000) is held');
    assert.equal(upstream.requests.length, 0);
  });

  test('Idempotency-Key: a retry gets the recorded stream, billed once; another body with the key is 422', async () => {
    const body = { model: 'gpt-resp', input: INPUT, stream: true };
    const headers = { 'idempotency-key': 'resp-once-1' };
    const first = await gw.call('POST', '/responses', { key, headers, body });
    const second = await gw.call('POST', '/responses', { key, headers, body });
    assert.equal(second.statusCode, 200);
    assert.equal(second.body, first.body, 'the same events');
    assert.equal(second.headers['x-tollgate-idempotency'], 'replayed');
    assert.equal(upstream.requests.length, 1, 'run once');
    assertErrorAnswer(await gw.call('POST', '/responses', { key, headers, body: { ...body, input: 'other' } }), 422, 'idempotency_mismatch');
  });

  test('previous_response_id unknown for this key: 404 previous_response_not_found, without any upstream call or hold', async () => {
    const res = await gw.call('POST', '/responses', { key, body: { model: 'gpt-resp', input: INPUT, previous_response_id: 'resp_never_made' } });
    const error = assertErrorAnswer(res, 404, 'previous_response_not_found');
    assert.equal(error.param, 'previous_response_id');
    assert.equal(upstream.requests.length, 0);
    // Another key's response is unknown too: a key cannot continue a response it did not make.
    const made = (await gw.call('POST', '/responses', { key, body: { model: 'gpt-resp', input: INPUT } })).json<Json>();
    const other = (await gw.issueKey({ name: 'other' })).secret;
    assertErrorAnswer(await gw.call('POST', '/responses', { key: other, body: { model: 'gpt-resp', input: INPUT, previous_response_id: made.id } }), 404, 'previous_response_not_found');
    const unknownItem = await gw.call('POST', '/responses', { key, body: { model: 'gpt-resp', input: [...INPUT, { type: 'item_reference', id: 'msg_never' }] } });
    assert.equal(assertErrorAnswer(unknownItem, 404, 'previous_response_not_found').param, 'input[1].id');
    // A reasoning item by id alone is resolved upstream from what it stored: the same rule.
    const byId = await gw.call('POST', '/responses', { key: other, body: { model: 'gpt-resp', input: [{ type: 'reasoning', id: 'rs_someone_elses', summary: [] }, ...INPUT] } });
    assert.equal(assertErrorAnswer(byId, 404, 'previous_response_not_found').param, 'input[0].id');
    const withContent = await gw.call('POST', '/responses', { key: other, body: { model: 'gpt-resp', store: false, input: [{ type: 'reasoning', id: 'rs_x', summary: [], encrypted_content: 'gAAAA' }, ...INPUT] } });
    assert.equal(withContent.statusCode, 200, 'a reasoning item that carries its encrypted content names nothing stored');
    assert.equal(upstream.requests.length, 2, 'only the requests that named nothing unknown reached the upstream');
  });

  test('a continuation is pinned to the account that made the response (no fallback), and holds the recorded context', async () => {
    // The first account fails: the response is made by the backup account (the model's fallback).
    upstream.handle((req) => (req.headers.authorization === `Bearer ${RESPONSES_MOCK_KEY}` ? openaiError(503, 'Overloaded.', { type: 'server_error' }) : mockDefault(upstream, req)));
    const first = await gw.call('POST', '/responses', { key, body: { model: 'gpt-pair', input: INPUT } });
    assert.equal(first.statusCode, 200, first.body);
    const made = first.json<Json>();
    upstream.reset();
    for (const [id] of [[made.id]]) assert.ok(id);
    // Both accounts healthy now: the continuation still goes to the backup account, first.
    const quote = (await gw.call('POST', '/responses', { key, headers: { 'x-tollgate-dry-run': '1' }, body: { model: 'gpt-pair', input: INPUT, previous_response_id: made.id } })).json<Json>();
    const plain = (await gw.call('POST', '/responses', { key, headers: { 'x-tollgate-dry-run': '1' }, body: { model: 'gpt-pair', input: INPUT } })).json<Json>();
    assert.equal(quote.input_tokens - plain.input_tokens, made.usage.input_tokens + made.usage.output_tokens, 'the hold adds the recorded context');
    // The mock forgot its store on reset: make it remember this response under the backup account again.
    upstream.stored.set(made.id, { account: `Bearer ${RESPONSES_BACKUP_KEY}`, items: made.output.map((item: Json) => item.id), usage: made.usage });
    const next = await gw.call('POST', '/responses', { key, body: { model: 'gpt-pair', input: INPUT, previous_response_id: made.id } });
    assert.equal(next.statusCode, 200, next.body);
    assert.deepEqual(upstream.requests.map((r) => r.headers.authorization), [`Bearer ${RESPONSES_BACKUP_KEY}`]);
    // The backup account failing now is a failure: never the other account, which does not have the response.
    upstream.handle((req) => (req.headers.authorization === `Bearer ${RESPONSES_BACKUP_KEY}` ? openaiError(503, 'Overloaded.', { type: 'server_error' }) : mockDefault(upstream, req)));
    upstream.requests.length = 0;
    const failed = await gw.call('POST', '/responses', { key, body: { model: 'gpt-pair', input: [{ type: 'item_reference', id: made.output[0].id }] } });
    assertErrorAnswer(failed, 502, 'upstream_error');
    assert.deepEqual(upstream.requests.map((r) => r.headers.authorization), [`Bearer ${RESPONSES_BACKUP_KEY}`], 'an item reference pins too');
  });

  test('store: false leaves nothing to continue from: its id is unknown afterwards', async () => {
    const made = (await gw.call('POST', '/responses', { key, body: { model: 'gpt-resp', input: INPUT, store: false } })).json<Json>();
    assertErrorAnswer(await gw.call('POST', '/responses', { key, body: { model: 'gpt-resp', input: INPUT, previous_response_id: made.id } }), 404, 'previous_response_not_found');
    const refs = await gw.store.responses.find(keyId, [made.id], Date.now());
    assert.deepEqual(refs, []);
  });

  test('a stored response records its id and output item ids with the account and token counts, never content', async () => {
    const res = await gw.call('POST', '/responses', { key, body: { model: 'gpt-5-test', input: INPUT, stream: true } });
    const done = eventsOf(res.body).at(-1)!.data.response;
    const ids = [done.id, ...done.output.map((item: Json) => item.id)];
    const refs = await gw.store.responses.find(keyId, ids, Date.now());
    assert.equal(refs.length, ids.length);
    for (const ref of refs) {
      assert.deepEqual({ ...ref, id: undefined }, { id: undefined, responseId: done.id, provider: 'openai', inputTokens: done.usage.input_tokens, outputTokens: done.usage.output_tokens });
    }
  });

  test('POST /v1/responses/input_tokens: the upstream count where the kind has one, else the estimate; free, counts toward rpm', async () => {
    const counter = await gw.issueKey({ name: 'counter', limits: { rpm: 2 } });
    const res = await gw.call('POST', '/responses/input_tokens', { key: counter.secret, body: { model: 'gpt-resp', input: INPUT } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { object: 'response.input_tokens', input_tokens: upstream.inputTokensAnswer });
    assert.equal(upstream.requests[0]!.path, '/v1/responses/input_tokens');
    assert.equal(upstream.requests[0]!.body.model, 'gpt-4o-mini');
    const local = await gw.call('POST', '/responses/input_tokens', { key: counter.secret, body: { model: 'gpt-compat-resp', input: INPUT } });
    assert.equal(local.statusCode, 200, local.body);
    const quote = (await gw.call('POST', '/responses', { key, headers: { 'x-tollgate-dry-run': '1' }, body: { model: 'gpt-compat-resp', input: INPUT } })).json<Json>();
    assert.equal(local.json<Json>().input_tokens, quote.input_tokens, 'the local estimate, as the hold counts it');
    assert.equal(upstream.requests.length, 1, 'the compatible server was not asked');
    assertErrorAnswer(await gw.call('POST', '/responses/input_tokens', { key: counter.secret, body: { model: 'gpt-resp', input: INPUT } }), 429, 'rate_limited');
    const after = (await gw.store.keys.get(counter.key.id))!;
    assert.equal(after.balance, counter.key.balance, 'nothing charged');
    assert.equal(after.held, 0, 'nothing held');
    assertErrorAnswer(await gw.call('POST', '/responses/input_tokens', { key, body: { model: 'gpt-resp', previous_response_id: 'resp_x' } }), 404, 'previous_response_not_found');
  });

  test('GET and DELETE of a stored response and its sub-paths: 404 in the OpenAI envelope (Tollgate stores no responses)', async () => {
    for (const [method, path] of [['GET', '/responses/resp_1'], ['DELETE', '/responses/resp_1'], ['GET', '/responses/resp_1/input_items'], ['DELETE', '/responses/resp_1/x/y']] as const) {
      const error = assertErrorAnswer(await gw.call(method, path, { key }), 404, 'not_found');
      assert.match(String(error.message), /does not store responses/);
    }
    assertErrorAnswer(await gw.call('GET', '/responses/resp_1'), 401, 'invalid_api_key');
    assert.equal(upstream.requests.length, 0);
  });
});
