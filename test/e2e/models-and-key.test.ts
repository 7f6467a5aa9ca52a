// End to end: GET /v1/models, GET /v1/models/{id} and GET /v1/key against the real gateway process,
// with raw fetch (to see bytes and headers) and the openai SDK.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic, { NotFoundError as AnthropicNotFoundError } from '@anthropic-ai/sdk';
import { NotFoundError } from 'openai';
import type { CreatedKey } from '../support/gateway-process.js';
import { assertMatchesSchema } from '../support/openapi.js';
import { assertErrorResponse, call, costOf, postChat, sdk, startE2E, stopE2E, type E2E, type Json } from '../support/e2e.js';
import { assertLedgerSettled, UsageExpectations } from '../support/ledger-check.js';
import { chatCostNano, embeddingCostNano, usdToNano } from '../support/money.js';

const ALL_MODELS = ['embed-test', 'gpt-locked', 'gpt-reasoning', 'gpt-test'];
const ENTRY_KEYS = ['context_window', 'created', 'created_at', 'display_name', 'id', 'max_output_tokens', 'model_type', 'object', 'owned_by', 'pricing', 'type'];

describe('models and key endpoints', () => {
  let e: E2E;
  let limited: CreatedKey;
  let full: CreatedKey;

  /** Usage rows are checked at the end of the file, with one `tollgate usage --json` run per key. */
  const expectedRows = new UsageExpectations();

  before(async () => {
    e = await startE2E();
    [limited, full] = await Promise.all([
      e.gw.createKey({ name: 'limited', balance: 5, models: ['gpt-test', 'embed-test'] }),
      e.gw.createKey({ name: 'full', balance: 5 }),
    ]);
  });
  after(() => stopE2E(e));

  test('GET /v1/models lists exactly the models a restricted key may use, in the OpenAI list shape', async () => {
    const res = await call(e.gw, 'GET', '/models', { key: limited.key });
    assert.equal(res.status, 200);
    assert.ok(res.headers.get('x-request-id'));
    assertMatchesSchema('ListModelsResponse', res.json);
    assert.equal(res.json.object, 'list');
    assert.deepEqual(res.json.data.map((m: Json) => m.id), ['embed-test', 'gpt-test'], 'in id order');
    assert.deepEqual([res.json.has_more, res.json.first_id, res.json.last_id], [false, 'embed-test', 'gpt-test']);
    for (const entry of res.json.data as Json[]) {
      assertMatchesSchema('Model', entry);
      assert.deepEqual(Object.keys(entry).sort(), ENTRY_KEYS);
      assert.equal(entry.object, 'model');
      assert.ok(Number.isInteger(entry.created) && entry.created > 0, 'created is a unix time');
      assert.equal(typeof entry.owned_by, 'string');
    }
    const chat = res.json.data.find((m: Json) => m.id === 'gpt-test');
    assert.equal(chat.type, 'model', "Anthropic's type: always model");
    assert.equal(chat.model_type, 'chat');
    assert.equal(chat.display_name, 'gpt-test');
    assert.equal(chat.created_at, new Date(chat.created * 1000).toISOString(), 'created_at is created as RFC 3339');
    assert.equal(chat.context_window, 8000);
    assert.equal(chat.max_output_tokens, 1000);
    assert.deepEqual(chat.pricing, { input: 1, output: 2, cached_input: 0.5 });
    const embedding = res.json.data.find((m: Json) => m.id === 'embed-test');
    assert.equal(embedding.model_type, 'embedding');
    assert.equal(embedding.pricing.input, 0.1);
    assert.equal(embedding.pricing.output, undefined);
  });

  test('GET /v1/models lists every configured model for a key that may use all models', async () => {
    const res = await call(e.gw, 'GET', '/models', { key: full.key });
    assert.equal(res.status, 200);
    assertMatchesSchema('ListModelsResponse', res.json);
    assert.deepEqual(res.json.data.map((m: Json) => m.id).sort(), ALL_MODELS);
  });

  test('client.models.list() and client.models.retrieve() work with the openai SDK', async () => {
    const client = sdk(e.gw, limited.key);
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    assert.deepEqual(ids.sort(), ['embed-test', 'gpt-test']);
    const model = await client.models.retrieve('gpt-test');
    assert.equal(model.id, 'gpt-test');
    assert.equal(model.object, 'model');
    await assert.rejects(client.models.retrieve('gpt-locked'), (error: unknown) => error instanceof NotFoundError && error.status === 404);
  });

  test('the Anthropic SDK lists the models page by page and retrieves one, with x-api-key or Bearer', async () => {
    // Its base URL is the origin (it adds /v1 itself); apiKey goes in x-api-key, authToken in Authorization.
    const byApiKey = new Anthropic({ apiKey: full.key, baseURL: e.gw.origin, maxRetries: 0 });
    const byToken = new Anthropic({ authToken: full.key, apiKey: null, baseURL: e.gw.origin, maxRetries: 0 });
    for (const client of [byApiKey, byToken]) {
      const all: string[] = [];
      for await (const model of client.models.list()) all.push(model.id);
      assert.deepEqual(all, ALL_MODELS, 'the whole list, in id order');
      // Pages of one: the SDK follows has_more / last_id with after_id until the end.
      const paged: string[] = [];
      for await (const model of client.models.list({ limit: 1 })) paged.push(model.id);
      assert.deepEqual(paged, ALL_MODELS);
      const page = await client.models.list({ limit: 2, after_id: 'embed-test' });
      assert.deepEqual([page.data.map((m) => m.id), page.has_more, page.first_id, page.last_id], [['gpt-locked', 'gpt-reasoning'], true, 'gpt-locked', 'gpt-reasoning']);
      const before = await client.models.list({ limit: 2, before_id: 'gpt-test' });
      assert.deepEqual([before.data.map((m) => m.id), before.has_more], [['gpt-locked', 'gpt-reasoning'], true]);
      const model = await client.models.retrieve('gpt-test');
      assert.deepEqual([model.id, model.type, model.display_name, Number.isNaN(Date.parse(model.created_at))], ['gpt-test', 'model', 'gpt-test', false]);
    }
    const limitedClient = new Anthropic({ apiKey: limited.key, baseURL: e.gw.origin, maxRetries: 0 });
    const visible: string[] = [];
    for await (const model of limitedClient.models.list({ limit: 1 })) visible.push(model.id);
    assert.deepEqual(visible, ['embed-test', 'gpt-test'], 'only the models the key may use');
    await assert.rejects(limitedClient.models.retrieve('gpt-locked'), (error: unknown) => error instanceof AnthropicNotFoundError && error.status === 404);
  });

  test('GET /v1/models answers 200 with other query parameters (Anthropic’s ?beta=true); a bad page query is a 400 that names the parameter', async () => {
    const withQuery = await call(e.gw, 'GET', '/models?beta=true&limit=1', { key: full.key });
    assert.equal(withQuery.status, 200);
    assert.deepEqual(withQuery.json.data.map((m: Json) => m.id), ['embed-test']);
    for (const [query, param] of [
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=two', 'limit'],
      ['after_id=', 'after_id'],
      ['after_id=a&before_id=b', 'before_id'],
    ] as const) {
      const res = await call(e.gw, 'GET', `/models?${query}`, { key: full.key });
      const error = assertErrorResponse(res, 400, 'invalid_request');
      assert.equal(error.param, param, query);
    }
  });

  test('GET /v1/models/{id} answers the same entry the list shows', async () => {
    const list = await call(e.gw, 'GET', '/models', { key: full.key });
    for (const id of ['gpt-test', 'embed-test']) {
      const res = await call(e.gw, 'GET', `/models/${id}`, { key: full.key });
      assert.equal(res.status, 200);
      assert.ok(res.headers.get('x-request-id'));
      assertMatchesSchema('Model', res.json);
      assert.deepEqual(res.json, list.json.data.find((m: Json) => m.id === id));
    }
  });

  test('a model the key may not use answers 404 model_not_found byte for byte like an unknown model', async () => {
    // Same-length ids, so the bodies must match exactly once the requested id is substituted.
    const forbidden = await call(e.gw, 'GET', '/models/gpt-locked', { key: limited.key });
    const unknown = await call(e.gw, 'GET', '/models/gpt-lockex', { key: limited.key });
    const unknownForFull = await call(e.gw, 'GET', '/models/gpt-lockex', { key: full.key });
    assertErrorResponse(forbidden, 404, 'model_not_found');
    assertErrorResponse(unknown, 404, 'model_not_found');
    assert.equal(forbidden.text.replaceAll('gpt-locked', 'gpt-lockex'), unknown.text);
    assert.equal(unknownForFull.text, unknown.text);
    assert.equal(forbidden.headers.get('content-length'), unknown.headers.get('content-length'));
    assert.equal(forbidden.headers.get('content-type'), unknown.headers.get('content-type'));

    // And the same at the call endpoint, without any upstream call.
    const calls = e.mock.requests.length;
    const messages = [{ role: 'user', content: 'hi' }];
    const forbiddenCall = await postChat(e.gw, limited.key, { model: 'gpt-locked', messages });
    const unknownCall = await postChat(e.gw, limited.key, { model: 'gpt-lockex', messages });
    assertErrorResponse(forbiddenCall, 404, 'model_not_found');
    assertErrorResponse(unknownCall, 404, 'model_not_found');
    assert.equal(forbiddenCall.text.replaceAll('gpt-locked', 'gpt-lockex'), unknownCall.text);
    assert.equal(forbiddenCall.text, forbidden.text, 'GET /v1/models/{id} answers 404 exactly as a call does');
    assert.equal(e.mock.requests.length, calls, 'no upstream call');
    assert.equal(e.gw.audit(limited.id).usageRows, 0, 'no usage row');
  });

  test('GET /v1/key returns the calling key’s own state', async () => {
    const res = await call(e.gw, 'GET', '/key', { key: limited.key });
    assert.equal(res.status, 200);
    assert.ok(res.headers.get('x-request-id'));
    assert.deepEqual(Object.keys(res.json), ['data']);
    const data = res.json.data;
    assert.deepEqual(Object.keys(data).sort(), [
      'account',
      'allowed_models',
      'available',
      'balance',
      'budget_resets_at',
      'budget_used',
      'credit_left',
      'credit_limit',
      'expires_at',
      'held',
      'id',
      'limits',
      'name',
      'usage',
    ]);
    assert.deepEqual(data.limits, { rpm: null, tpm: null, max_concurrent: null, budget: null, budget_period: null }, 'no limits unless set');
    assert.equal(data.id, limited.id);
    assert.equal(data.name, 'limited');
    assert.equal(data.balance, 5);
    assert.equal(data.held, 0);
    assert.equal(data.available, 5);
    assert.equal(data.usage, 0);
    assert.equal(data.credit_limit, null);
    assert.equal(data.credit_left, null);
    assert.deepEqual(data.account, { id: `acct_${String(limited.id).slice(4)}`, name: 'limited', personal: true, available: 5 }, "a key made without an account has its own, personal one");
    assert.deepEqual([...data.allowed_models].sort(), ['embed-test', 'gpt-test']);

    const fullRes = await call(e.gw, 'GET', '/key', { key: full.key });
    assert.equal(fullRes.json.data.id, full.id);
    assert.equal(fullRes.json.data.allowed_models, '*');
  });

  test('GET /v1/key balance and usage move by exactly the charges of the calls made', async () => {
    const client = sdk(e.gw, full.key);
    const before = (await call(e.gw, 'GET', '/key', { key: full.key })).json.data;
    const auditBefore = e.gw.audit(full.id);

    const { data: completion, response: chatResponse } = await client.chat.completions
      .create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hello there' }] })
      .withResponse();
    assertMatchesSchema('CreateChatCompletionResponse', completion);
    const chatCost = chatCostNano(11, 7);
    assert.equal(costOf(completion.usage), chatCost);

    const { data: embedding, response: embeddingResponse } = await client.embeddings
      .create({ model: 'embed-test', input: 'one two three', encoding_format: 'float' })
      .withResponse();
    assertMatchesSchema('CreateEmbeddingResponse', embedding);
    const embedCost = embeddingCostNano(3);
    assert.equal(costOf(embedding.usage), embedCost);

    const after = (await call(e.gw, 'GET', '/key', { key: full.key })).json.data;
    const total = chatCost + embedCost;
    assert.equal(usdToNano(before.balance) - usdToNano(after.balance), total, 'balance decreased by exactly the charges');
    assert.equal(usdToNano(after.usage) - usdToNano(before.usage), total, 'usage increased by exactly the charges');
    assert.equal(after.held, 0);
    assert.equal(after.available, after.balance);

    const auditAfter = assertLedgerSettled(e.gw, full.id);
    assert.equal(auditAfter.spent - auditBefore.spent, total);
    assert.equal(auditBefore.balance - auditAfter.balance, total);
    assert.equal(auditAfter.balance, usdToNano(after.balance));

    expectedRows.add({
      requestId: chatResponse.headers.get('x-request-id')!,
      keyId: full.id,
      model: 'gpt-test',
      upstreamModel: 'gpt-4o-mini',
      input: 11,
      output: 7,
      costNano: chatCost,
    });
    expectedRows.add({
      requestId: embeddingResponse.headers.get('x-request-id')!,
      keyId: full.id,
      model: 'embed-test',
      upstreamModel: 'text-embedding-3-small',
      input: 3,
      output: 0,
      costNano: embedCost,
    });
  });

  test('every request left one usage row and, for every key, the rows add up to a settled, consistent ledger', async () => {
    await expectedRows.verify(e.gw, [limited.id, full.id]);
  });
});
