// A chat completion, streamed and not, and an embedding through the whole in-process server: route, key,
// hold, the real upstream transport to the mock upstream, settlement, the answer and the usage row. It
// proves test/support/in-process.ts runs the same request path as `tollgate serve` (test/e2e/chat*.test.ts
// pin the details through a spawned gateway and the openai SDK).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcess, type InProcessGateway } from '../../support/in-process.js';
import { chatCostNano, embeddingCostNano, usdToNano } from '../../support/money.js';
import { assertMatchesSchema } from '../../support/openapi.js';

const MESSAGES = [{ role: 'user', content: 'Hi' }];

describe('model calls through the in-process server', () => {
  let gw: InProcessGateway;
  let key: string;
  let keyId: string;

  before(async () => {
    gw = await startInProcess();
    const issued = await gw.issueKey();
    key = issued.secret;
    keyId = issued.key.id;
  });
  after(() => gw.close());

  /** The key's balance moved by exactly `cost`, and the request left one usage row with that cost. */
  async function charged(requestId: string, cost: number, before: number): Promise<void> {
    assert.equal((await gw.store.keys.get(keyId))!.balance, before - cost);
    const rows = await gw.store.usage.list({ keyId, limit: 100 });
    assert.deepEqual(
      rows.filter((row) => row.requestId === requestId).map((row) => ({ status: row.status, cost: row.cost, source: row.usageSource })),
      [{ status: 200, cost, source: 'upstream' }],
    );
  }

  test('a chat completion is answered by the upstream and charged its exact usage', async () => {
    const before = (await gw.store.keys.get(keyId))!.balance;
    const res = await gw.call('POST', '/chat/completions', { key, body: { model: 'gpt-test', messages: MESSAGES } });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json<{ model: string; usage: { prompt_tokens: number; completion_tokens: number; cost: number } }>();
    assertMatchesSchema('CreateChatCompletionResponse', body);
    assert.equal(body.model, 'gpt-test');
    assert.equal(gw.mock.requests.at(-1)?.body.model, 'gpt-4o-mini', 'the upstream model was called');
    const cost = chatCostNano(body.usage.prompt_tokens, body.usage.completion_tokens);
    assert.equal(usdToNano(body.usage.cost), cost);
    await charged(String(res.headers['x-request-id']), cost, before);
  });

  test('a streamed chat completion ends with the usage chunk and [DONE], charged its exact usage', async () => {
    const before = (await gw.store.keys.get(keyId))!.balance;
    const res = await gw.call('POST', '/chat/completions', { key, body: { model: 'gpt-test', messages: MESSAGES, stream: true } });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^text\/event-stream/);
    const events = res.body
      .split('\n\n')
      .filter((frame) => frame !== '')
      .map((frame) => frame.replace(/^data: /, ''));
    assert.equal(events.at(-1), '[DONE]');
    const final = JSON.parse(events.at(-2)!) as { choices: unknown[]; usage: { prompt_tokens: number; completion_tokens: number; cost: number } };
    assertMatchesSchema('CreateChatCompletionStreamResponse', final);
    assert.deepEqual(final.choices, []);
    const cost = chatCostNano(final.usage.prompt_tokens, final.usage.completion_tokens);
    assert.equal(usdToNano(final.usage.cost), cost);
    await charged(String(res.headers['x-request-id']), cost, before);
  });

  test('an embedding is answered and charged its exact usage', async () => {
    const before = (await gw.store.keys.get(keyId))!.balance;
    const res = await gw.call('POST', '/embeddings', { key, body: { model: 'embed-test', input: 'Hi there' } });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json<{ usage: { prompt_tokens: number; cost: number } }>();
    assertMatchesSchema('CreateEmbeddingResponse', body);
    const cost = embeddingCostNano(body.usage.prompt_tokens);
    assert.equal(usdToNano(body.usage.cost), cost);
    await charged(String(res.headers['x-request-id']), cost, before);
  });
});
