// Dry run (X-Tollgate-Dry-Run: 1) and clamp (X-Tollgate-Max-Tokens: clamp, or clamp_max_tokens on the
// key), product.md §13: a quote moves nothing; a clamp turns an avoidable 402 into a call with max_tokens
// lowered to affordable_max_tokens, which is what the upstream sees.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { assertLedgerSettled, ledgerKinds } from '../support/ledger-check.js';
import { assertErrorResponse, call, costOf, extendConfig, parseJsonOutput, postChat, startE2E, stopE2E, type E2E, type Json } from '../support/e2e.js';
import { mockConfig } from '../support/gateway-process.js';

const DRY = { 'x-tollgate-dry-run': '1' };

describe('dry run and clamp', () => {
  let e: E2E;

  before(async () => {
    e = await startE2E((mock) =>
      extendConfig(mockConfig(mock), {
        models: `  gpt-big:
    upstreams: [{ provider: mock, model: gpt-4o-mini }]
    price: { input: 1, output: 2 }
    max_output_tokens: 64000`,
      }),
    );
  });

  after(() => stopE2E(e));

  test('the quote equals the 402 metadata of the same body on a poor key, and nothing moved', async () => {
    e.mock.reset();
    const key = await e.gw.createKey({ name: 'poor', balance: '0.0001' });
    const body = { model: 'gpt-test', max_tokens: 1000, messages: [{ role: 'user', content: 'How much would this cost?' }] };
    const quote = await postChat(e.gw, key.key, body, { headers: DRY });
    assert.equal(quote.status, 200, quote.text);
    assert.deepEqual(Object.keys(quote.json).sort(), ['affordable_max_tokens', 'available', 'hold', 'input_tokens', 'object']);
    assert.equal(quote.json.object, 'quote');
    const refused = await postChat(e.gw, key.key, body);
    const error = assertErrorResponse(refused, 402, 'insufficient_balance');
    assert.deepEqual({ hold: quote.json.hold, available: quote.json.available, affordable_max_tokens: quote.json.affordable_max_tokens }, error.metadata);
    // Prices $1 / $2 per 1M: the hold is input × 1000 + 1000 × 2000 nano.
    assert.equal(Math.round(quote.json.hold * 1e9), quote.json.input_tokens * 1000 + 2_000_000);
    assert.deepEqual(ledgerKinds(e.gw, key.id), ['topup'], 'no hold was ever placed');
    assert.equal(e.mock.requests.length, 0, 'no upstream call');
    const state = await call(e.gw, 'GET', '/key', { key: key.key });
    assert.equal(state.json.data.balance, 0.0001);
  });

  test('embeddings answer a quote too', async () => {
    e.mock.reset();
    const key = await e.gw.createKey({ name: 'embed-quote', balance: 1 });
    const quote = await call(e.gw, 'POST', '/embeddings', { key: key.key, body: { model: 'embed-test', input: 'hello there' }, headers: DRY });
    assert.equal(quote.status, 200);
    assert.equal(quote.json.object, 'quote');
    assert.equal(quote.json.affordable_max_tokens, 0);
    assert.equal(Math.round(quote.json.hold * 1e9), quote.json.input_tokens * 100);
    assert.equal(e.mock.requests.length, 0);
    assert.deepEqual(ledgerKinds(e.gw, key.id), ['topup']);
  });

  test('clamp: a $0.01 key asking for 64000 tokens gets an answer at affordable_max_tokens, which the upstream saw', async () => {
    e.mock.reset();
    const key = await e.gw.createKey({ name: 'clamp', balance: '0.01' });
    const body = { model: 'gpt-big', max_tokens: 64000, messages: [{ role: 'user', content: 'A one-line answer, please.' }] };
    const quote = await postChat(e.gw, key.key, body, { headers: DRY });
    const affordable = quote.json.affordable_max_tokens as number;
    assert.ok(affordable >= 1 && affordable < 64000, `affordable ${affordable}`);
    assertErrorResponse(await postChat(e.gw, key.key, body), 402, 'insufficient_balance');
    const client = new OpenAI({ apiKey: key.key, baseURL: e.gw.baseURL, maxRetries: 0 });
    const { data, response } = await client.chat.completions
      .create(body as OpenAI.ChatCompletionCreateParamsNonStreaming, { headers: { 'X-Tollgate-Max-Tokens': 'clamp' } })
      .withResponse();
    assert.ok(data.choices[0]!.message.content);
    assert.equal(response.headers.get('x-tollgate-max-tokens-clamped'), String(affordable));
    assert.equal(e.mock.requests.length, 1);
    assert.equal(e.mock.requests[0]!.body.max_tokens, affordable, 'the upstream saw the lowered max_tokens');
    assert.equal(assertLedgerSettled(e.gw, key.id).spent, costOf(data.usage));
  });

  test('clamp_max_tokens on the key (keys set-limits) clamps without the header; max_completion_tokens is the field lowered when used', async () => {
    e.mock.reset();
    const key = await e.gw.createKey({ name: 'clamp-key', balance: '0.01' });
    const shown = parseJsonOutput<Json>(await e.gw.cli(['keys', 'set-limits', key.id, '--clamp-max-tokens', 'on', '--json']), 'set-limits');
    assert.equal(shown.clamp_max_tokens, true);
    const res = await postChat(e.gw, key.key, { model: 'gpt-big', max_completion_tokens: 64000, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(res.status, 200, res.text);
    const clamped = Number(res.headers.get('x-tollgate-max-tokens-clamped'));
    assert.ok(clamped >= 1 && clamped < 64000);
    assert.equal(e.mock.requests[0]!.body.max_completion_tokens, clamped);
    const off = parseJsonOutput<Json>(await e.gw.cli(['keys', 'set-limits', key.id, '--clamp-max-tokens', 'off', '--json']), 'set-limits off');
    assert.equal(off.clamp_max_tokens, false);
    const bad = await e.gw.cli(['keys', 'set-limits', key.id, '--clamp-max-tokens', 'maybe']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /clamp_max_tokens/);
  });

  test('clamp cannot help when even the input does not fit: the 402 stands, nothing moved', async () => {
    e.mock.reset();
    const key = await e.gw.createKey({ name: 'clamp-empty', balance: 0 });
    const res = await postChat(e.gw, key.key, { model: 'gpt-big', max_tokens: 64000, messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-tollgate-max-tokens': 'clamp' } });
    const error = assertErrorResponse(res, 402, 'insufficient_balance');
    assert.equal(error.metadata.affordable_max_tokens, 0);
    assert.equal(res.headers.get('x-tollgate-max-tokens-clamped'), null);
    assert.equal(e.mock.requests.length, 0);
    assert.deepEqual(ledgerKinds(e.gw, key.id), [], 'no entry: a zero balance has no top-up');
  });
});
