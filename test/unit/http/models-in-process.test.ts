// GET /v1/models and /v1/models/{id}, in process: a key sees exactly the models it may use, in the OpenAI
// list shape; one it may not use is answered like an unknown one; an id with a slash is one id; a model
// none of whose providers can be called is not offered. test/e2e/models-and-key.test.ts pins the same
// through a spawned gateway and the openai SDK.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertErrorAnswer, startInProcess, type InProcessGateway } from '../../support/in-process.js';
import { mockConfig } from '../../support/mock-config.js';
import { assertMatchesSchema } from '../../support/openapi.js';

// A model whose id has a slash, and one whose only provider (kind openai) has no api_key.
const EXTRA = `
  meta-llama/Llama-3.1-8B-Instruct:
    type: chat
    upstreams: [{ provider: mock, model: llama }]
    price: { input: 1, output: 2 }
    max_output_tokens: 1000
  gpt-nokey:
    type: chat
    upstreams: [{ provider: nokey, model: gpt-4o }]
    price: { input: 1, output: 2 }
    max_output_tokens: 1000
`;

interface ModelList {
  object: string;
  data: Array<{ id: string; object: string; type: string; pricing: unknown }>;
}

describe('the models a key may use (in process)', () => {
  let gw: InProcessGateway;
  let full: string;
  let limited: string;

  before(async () => {
    gw = await startInProcess((mock) => `${mockConfig(mock, EXTRA)}\n`.replace('providers:\n', 'providers:\n  nokey:\n    kind: openai\n    api_key: ""\n'));
    full = (await gw.issueKey({ name: 'full' })).secret;
    limited = (await gw.issueKey({ name: 'limited', allowedModels: ['gpt-test', 'embed-test'] })).secret;
  });
  after(() => gw.close());

  test('GET /v1/models lists every usable model for a key allowed all, and only its own for a restricted key', async () => {
    const all = await gw.call('GET', '/models', { key: full });
    assert.equal(all.statusCode, 200);
    assertMatchesSchema('ListModelsResponse', all.json());
    assert.deepEqual(
      all
        .json<ModelList>()
        .data.map((m) => m.id)
        .sort(),
      ['embed-test', 'gpt-locked', 'gpt-reasoning', 'gpt-test', 'meta-llama/Llama-3.1-8B-Instruct'],
    );
    const own = await gw.call('GET', '/models', { key: limited });
    assert.deepEqual(
      own
        .json<ModelList>()
        .data.map((m) => m.id)
        .sort(),
      ['embed-test', 'gpt-test'],
    );
  });

  test('GET /v1/models pages the models in id order as Anthropic pages its list; a cursor need not be a model the key sees', async () => {
    const page = async (query: string) => {
      const res = await gw.call('GET', `/models?${query}`, { key: limited });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json<{ data: Array<{ id: string }>; has_more: boolean; first_id: string | null; last_id: string | null }>();
      return [body.data.map((m) => m.id), body.has_more, body.first_id, body.last_id];
    };
    // The limited key sees embed-test and gpt-test; gpt-locked lies between them and is not revealed.
    assert.deepEqual(await page('limit=1'), [['embed-test'], true, 'embed-test', 'embed-test']);
    assert.deepEqual(await page('limit=1&after_id=embed-test'), [['gpt-test'], false, 'gpt-test', 'gpt-test']);
    assert.deepEqual(await page('after_id=gpt-locked'), [['gpt-test'], false, 'gpt-test', 'gpt-test']);
    assert.deepEqual(await page('before_id=gpt-locked'), [['embed-test'], false, 'embed-test', 'embed-test']);
    assert.deepEqual(await page('limit=1&before_id=zzz'), [['gpt-test'], true, 'gpt-test', 'gpt-test']);
    assert.deepEqual(await page('after_id=zzz'), [[], false, null, null]);
    assert.deepEqual(await page('limit=1000'), [['embed-test', 'gpt-test'], false, 'embed-test', 'gpt-test']);
  });

  test('a bad page query is a 400 naming the parameter; a repeated one too', async () => {
    for (const [query, param] of [
      ['limit=-1', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=1&limit=2', 'limit'],
      ['before_id=', 'before_id'],
      ['after_id=a&after_id=b', 'after_id'],
    ] as const) {
      const res = await gw.call('GET', `/models?${query}`, { key: full });
      assert.equal(assertErrorAnswer(res, 400, 'invalid_request').param, param, query);
    }
  });

  test('GET /v1/models/{id} answers the entry the list shows, for an id with a slash too', async () => {
    const list = (await gw.call('GET', '/models', { key: full })).json<ModelList>();
    for (const id of ['gpt-test', 'embed-test', 'meta-llama/Llama-3.1-8B-Instruct']) {
      const res = await gw.call('GET', `/models/${id}`, { key: full });
      assert.equal(res.statusCode, 200, res.body);
      assertMatchesSchema('Model', res.json());
      assert.deepEqual(res.json(), list.data.find((m) => m.id === id));
    }
  });

  test('a model the key may not use, and one that cannot be called, answer 404 exactly like an unknown model', async () => {
    const unknown = await gw.call('GET', '/models/gpt-lockex', { key: limited });
    assertErrorAnswer(unknown, 404, 'model_not_found');
    const forbidden = await gw.call('GET', '/models/gpt-locked', { key: limited });
    assert.equal(forbidden.body.replaceAll('gpt-locked', 'gpt-lockex'), unknown.body);
    const keyless = await gw.call('GET', '/models/gpt-nokey', { key: full });
    assert.equal(keyless.body.replaceAll('gpt-nokey', 'gpt-lockex'), unknown.body);
  });
});
