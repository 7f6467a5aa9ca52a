// End to end: POST /v1/embeddings through the real gateway process with the openai SDK: string and
// array input, float and base64 (the SDK default), each charged prompt_tokens × the embedding price.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type OpenAI from 'openai';
import type { EmbeddingCreateParams } from 'openai/resources/embeddings';
import type { CreatedKey } from '../support/gateway-process.js';
import { decodeFloat32Base64, defaultEmbeddingFor, embeddingList } from '../support/mock-upstream.js';
import { assertMatchesSchema } from '../support/openapi.js';
import { assertErrorResponse, call, costOf, startE2EWithKey, stopE2E, type E2E, type Json } from '../support/e2e.js';
import { assertLedgerSettled, UsageExpectations } from '../support/ledger-check.js';
import { embeddingCostNano } from '../support/money.js';

describe('embeddings', () => {
  let e: E2E;
  let key: CreatedKey;
  let client: OpenAI;

  /** Usage rows are checked at the end of the file, with one `tollgate usage --json` run. */
  const expectedRows = new UsageExpectations();

  before(async () => {
    ({ e, key, client } = await startE2EWithKey({ name: 'embed', balance: 1 }));
  });
  after(() => stopE2E(e));
  beforeEach(() => e.mock.reset());

  /** One SDK call: schema, model id, usage.cost, ledger delta and the usage row, all equal to tokens × price. */
  async function embed(params: EmbeddingCreateParams, tokens: number) {
    const before = e.gw.audit(key.id);
    const { data: body, response } = await client.embeddings.create(params).withResponse();
    assertMatchesSchema('CreateEmbeddingResponse', body);
    assert.equal(body.object, 'list');
    assert.equal(body.model, 'embed-test', 'the response names the client’s model id');
    assert.equal(body.usage.prompt_tokens, tokens);
    assert.equal(body.usage.total_tokens, tokens);
    const cost = embeddingCostNano(tokens);
    assert.equal(costOf(body.usage), cost, 'usage.cost = prompt_tokens × embedding price');
    const after = assertLedgerSettled(e.gw, key.id);
    assert.equal(after.spent - before.spent, cost);
    assert.equal(before.balance - after.balance, cost);
    const requestId = response.headers.get('x-request-id')!;
    assert.ok(requestId);
    expectedRows.add({
      label: `embeddings ${JSON.stringify(params.input)}`,
      requestId,
      keyId: key.id,
      model: 'embed-test',
      upstreamModel: 'text-embedding-3-small',
      input: tokens,
      output: 0,
      costNano: cost,
    });
    return body;
  }

  test('a string input with encoding_format float returns its vector and is charged exactly', async () => {
    const input = 'the quick brown fox';
    const body = await embed({ model: 'embed-test', input, encoding_format: 'float' }, 4);
    assert.equal(body.data.length, 1);
    assert.equal(body.data[0]!.object, 'embedding');
    assert.equal(body.data[0]!.index, 0);
    assert.deepEqual(body.data[0]!.embedding, defaultEmbeddingFor(input));
    assert.deepEqual(e.mock.requests[0]!.body, { model: 'text-embedding-3-small', input, encoding_format: 'float' });
  });

  test('an array input with the SDK default (base64) reaches the SDK as the same number arrays', async () => {
    const input = ['alpha beta', 'gamma'];
    const body = await embed({ model: 'embed-test', input }, 3);
    assert.equal(e.mock.requests[0]!.body.encoding_format, 'base64', 'the SDK asked for base64 and it went upstream');
    assert.deepEqual(e.mock.requests[0]!.body.input, input);
    assert.deepEqual(
      body.data.map((d) => d.index),
      [0, 1],
    );
    body.data.forEach((d, i) => assert.deepEqual(d.embedding, defaultEmbeddingFor(input[i]!)));
  });

  test('an array input with encoding_format float is charged for every input', async () => {
    const input = ['one', 'two three', 'four five six'];
    const body = await embed({ model: 'embed-test', input, encoding_format: 'float' }, 6);
    body.data.forEach((d, i) => assert.deepEqual(d.embedding, defaultEmbeddingFor(input[i]!)));
  });

  test('base64 on the wire is float32 little-endian that decodes to the float vector', async () => {
    const input = 'raw bytes please';
    const res = await call(e.gw, 'POST', '/embeddings', { key: key.key, body: { model: 'embed-test', input, encoding_format: 'base64' } });
    assert.equal(res.status, 200);
    const item: Json = res.json.data[0];
    assert.equal(typeof item.embedding, 'string');
    assert.deepEqual(decodeFloat32Base64(item.embedding), defaultEmbeddingFor(input));
    // The OpenAPI schema types `embedding` as a float array only; validate the body with the vector decoded.
    assertMatchesSchema('CreateEmbeddingResponse', { ...res.json, data: [{ ...item, embedding: decodeFloat32Base64(item.embedding) }] });
    assert.equal(costOf(res.json.usage), embeddingCostNano(3));
  });

  test('an upstream that ignores encoding_format base64 still reaches the SDK as numbers', async () => {
    const vector = [0.25, -0.5, 0.125, 1];
    e.mock.handle({ json: embeddingList([vector], { promptTokens: 2 }) });
    const body = await embed({ model: 'embed-test', input: 'ignored format' }, 2);
    assert.deepEqual(body.data[0]!.embedding, vector);
  });

  test('an embedding model at /v1/chat/completions is refused with 400 before any hold or upstream call', async () => {
    const before = e.gw.audit(key.id);
    const res = await call(e.gw, 'POST', '/chat/completions', { key: key.key, body: { model: 'embed-test', messages: [{ role: 'user', content: 'x' }] } });
    assertErrorResponse(res, 400, /^invalid/);
    assert.deepEqual(e.gw.audit(key.id), before);
    assert.equal(e.mock.requests.length, 0);
  });

  test('every request left one usage row (tokens, cost, source, provider, attempts) and the rows add up to the ledger', async () => {
    await expectedRows.verify(e.gw, [key.id]);
  });
});
