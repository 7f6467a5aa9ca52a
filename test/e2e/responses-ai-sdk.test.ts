// POST /v1/responses through a spawned gateway, driven by the AI SDK's default OpenAI provider
// (`openai(modelId)` speaks the Responses API): generateText and streamText with a tool over several
// steps. With `store` on (its default) the SDK sends the earlier reasoning back as an `item_reference`:
// the gateway pins that step to the upstream account that made the item — here the backup account, after
// the first one failed — and charges each step what the upstream reported. Refusals are APICallErrors.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { startGateway, stopGateway, readDatabase, type GatewayProcess } from '../support/gateway-process.js';
import { mockDefault, openaiError, responsesConfig, RESPONSES_BACKUP_KEY, RESPONSES_MOCK_KEY, startMockResponses, type MockResponses } from '../support/mock-responses.js';
import { toolResultText } from '../support/mock-defaults.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- request bodies are arbitrary JSON
type Json = any;

const weather = tool({
  description: 'The weather in a city.',
  inputSchema: z.object({ location: z.string() }),
  execute: async ({ location }) => `18 C in ${location}`,
});

describe('the Responses API through the AI SDK (default OpenAI provider)', () => {
  let mock: MockResponses;
  let gw: GatewayProcess;

  before(async () => {
    mock = await startMockResponses();
    gw = await startGateway({ config: responsesConfig(mock) });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
  });
  beforeEach(() => mock.reset());

  const rowsOf = (keyId: string) =>
    readDatabase(gw.dbPath, (db) => db.prepare("SELECT provider, cost, usage_source, input_tokens, output_tokens FROM usage_records WHERE key_id = ? AND usage_source <> 'none' ORDER BY rowid").all(keyId)) as Json[];

  /** The first account fails once (so the backup account makes the first response), then both are healthy. */
  function firstAccountFailsOnce(): void {
    let failed = false;
    mock.handle((req) => {
      if (!failed && req.headers.authorization === `Bearer ${RESPONSES_MOCK_KEY}`) {
        failed = true;
        return openaiError(503, 'Overloaded.', { type: 'server_error' });
      }
      return mockDefault(mock, req);
    });
  }

  /** The model's steps: the tool call step, then the answer step that refers back to the stored reasoning. */
  function assertPinnedSteps(): void {
    const served = mock.requests.filter((r) => r.headers.authorization === `Bearer ${RESPONSES_BACKUP_KEY}`);
    assert.equal(served.length, 2, 'both steps served by the backup account');
    assert.equal(mock.requests.length, 3, 'the failed first attempt, then the two steps: no request to the first account after it');
    const second = served[1]!.body;
    const references = second.input.filter((item: Json) => item.type === 'item_reference');
    assert.equal(references.length, 1, `the SDK referred to the stored reasoning: ${JSON.stringify(second.input)}`);
    assert.match(references[0].id, /^rs_/);
    assert.ok(second.input.some((item: Json) => item.type === 'function_call_output'));
  }

  test('generateText with a tool over two steps: the item_reference step pinned to the account that stored it, each step charged', async () => {
    const key = await gw.createKey({ name: 'generate' });
    const openai = createOpenAI({ apiKey: key.key, baseURL: gw.baseURL });
    firstAccountFailsOnce();
    const result = await generateText({ model: openai('gpt-5-pair'), prompt: 'Weather in Paris?', tools: { get_weather: weather }, stopWhen: stepCountIs(3), maxRetries: 0 });
    assert.equal(result.steps.length, 2);
    assert.match(result.text, new RegExp(`^${toolResultText('').trim()}`));
    assert.match(result.text, /18 C in Paris/);
    assertPinnedSteps();
    const rows = rowsOf(key.id);
    assert.deepEqual(rows.map((r) => [r.provider, r.usage_source]), [['backup', 'upstream'], ['backup', 'upstream']]);
    assert.equal(gw.audit(key.id).spent, rows.reduce((sum, r) => sum + r.cost, 0));
    assert.deepEqual(rows.map((r) => r.input_tokens), [result.steps[0]!.usage.inputTokens, result.steps[1]!.usage.inputTokens]);
  });

  test('streamText with a tool over two steps: the same pinning and charges, streamed', async () => {
    const key = await gw.createKey({ name: 'stream' });
    const openai = createOpenAI({ apiKey: key.key, baseURL: gw.baseURL });
    firstAccountFailsOnce();
    const result = streamText({ model: openai('gpt-5-pair'), prompt: 'Weather in Rome?', tools: { get_weather: weather }, stopWhen: stepCountIs(3), maxRetries: 0 });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    assert.match(text, /18 C in Paris/, 'the mock always asks for Paris');
    assert.equal((await result.steps).length, 2);
    assertPinnedSteps();
    const rows = rowsOf(key.id);
    assert.deepEqual(rows.map((r) => [r.provider, r.usage_source]), [['backup', 'upstream'], ['backup', 'upstream']]);
    assert.equal(gw.audit(key.id).spent, rows.reduce((sum, r) => sum + r.cost, 0));
  });

  test('a balance short of the hold is an APICallError 429 with code insufficient_quota, and no upstream call', async () => {
    const key = await gw.createKey({ name: 'broke', balance: '0.000001' });
    const openai = createOpenAI({ apiKey: key.key, baseURL: gw.baseURL });
    await assert.rejects(generateText({ model: openai('gpt-resp'), prompt: 'Hi', maxRetries: 0 }), (error: unknown) => {
      assert.ok(APICallError.isInstance(error), `an APICallError: ${String(error)}`);
      assert.equal(error.statusCode, 429);
      assert.equal(JSON.parse(error.responseBody!).error.code, 'insufficient_quota');
      assert.equal(error.responseHeaders?.['x-should-retry'], 'false');
      return true;
    });
    assert.equal(mock.requests.length, 0);
    assert.equal(gw.audit(key.id).spent, 0);
  });
});
