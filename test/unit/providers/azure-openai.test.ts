// The azure-openai adapter: OpenAI's API on Azure deployments — where requests go (deployment path,
// api-version), how they authenticate (api-key, never Authorization), and Azure's additions to replies
// (content-filter verdicts, the prelude chunk) kept away from the client.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { azureOpenAIAdapter } from '../../../src/providers/azure-openai/index.js';
import { findProviderKind } from '../../../src/providers/kinds.js';
import type { ChatRequestBody, JsonObject, UpstreamTarget } from '../../../src/providers/types.js';
import type { SseEvent } from '../../../src/providers/framing/sse.js';
import { testProvider, testTarget } from '../../support/provider-fixture.js';
import { countsOf } from '../../support/token-counts.js';

const FIXTURES = new URL('../../fixtures/upstream/', import.meta.url);

function azureTarget(overrides: { baseUrl?: string; apiVersion?: string; deployment?: string } = {}): UpstreamTarget {
  const url = new URL(overrides.baseUrl ?? 'https://contoso.openai.azure.com');
  return testTarget({
    provider: testProvider({
      id: 'azure',
      kind: 'azure-openai',
      baseUrl: url.href.replace(/\/+$/, ''),
      origin: url.origin,
      basePath: url.pathname.replace(/\/+$/, ''),
      apiKey: 'azure-secret-key',
      apiVersion: overrides.apiVersion ?? '2024-10-21',
    }),
    upstreamModel: overrides.deployment ?? 'gpt-4o-mini-prod',
    clientModel: 'chat-model',
  });
}

const chatBody = (extra: JsonObject = {}): ChatRequestBody => ({ model: 'chat-model', messages: [{ role: 'user', content: 'Hi' }], ...extra });
const ev = (payload: unknown): SseEvent => ({ event: undefined, data: typeof payload === 'string' ? payload : JSON.stringify(payload) });
const SAFE = { filtered: false, severity: 'safe' };
const FILTERS = { hate: SAFE, self_harm: SAFE, sexual: SAFE, violence: SAFE };

describe('azure-openai requests', () => {
  test('go to the deployment path with the api-version query', () => {
    const request = azureOpenAIAdapter.buildChatRequest(chatBody(), azureTarget());
    assert.equal(request.method, 'POST');
    assert.equal(request.path, '/openai/deployments/gpt-4o-mini-prod/chat/completions?api-version=2024-10-21');
  });

  test('percent-encode the deployment name and the api-version, so neither can add path segments or query keys', () => {
    const target = azureTarget({ deployment: 'team a/gpt?x=1#frag', apiVersion: '2025-04-01-preview&evil=1' });
    const request = azureOpenAIAdapter.buildChatRequest(chatBody(), target);
    assert.equal(
      request.path,
      '/openai/deployments/team%20a%2Fgpt%3Fx%3D1%23frag/chat/completions?api-version=2025-04-01-preview%26evil%3D1',
    );
    const url = new URL(request.path, 'https://contoso.openai.azure.com');
    assert.deepEqual([...url.searchParams.keys()], ['api-version']);
    assert.equal(url.pathname.split('/').length, 6, 'one path segment for the deployment');
  });

  test('keep a path in base_url in front of /openai (a proxy in front of the resource)', () => {
    const request = azureOpenAIAdapter.buildChatRequest(chatBody(), azureTarget({ baseUrl: 'https://gw.example.com/azure/eu/' }));
    assert.equal(request.path, '/azure/eu/openai/deployments/gpt-4o-mini-prod/chat/completions?api-version=2024-10-21');
  });

  test('write no credential (the transport signs with api-key) and never an Authorization header', () => {
    for (const stream of [false, true]) {
      const { headers } = azureOpenAIAdapter.buildChatRequest(chatBody({ stream }), azureTarget());
      assert.equal(headers['api-key'], undefined);
      assert.ok(!Object.keys(headers).some((name) => name.toLowerCase() === 'authorization'), 'no Authorization header');
      assert.equal(headers['content-type'], 'application/json');
      assert.equal(headers.accept, stream ? 'text/event-stream' : 'application/json');
    }
  });

  test('forward the body with the deployment as model, and force include_usage on streams', () => {
    const request = azureOpenAIAdapter.buildChatRequest(chatBody({ stream: true, stream_options: { include_obfuscation: false }, temperature: 0.2 }), azureTarget());
    assert.deepEqual(JSON.parse(request.body!), {
      model: 'gpt-4o-mini-prod',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      stream_options: { include_obfuscation: false, include_usage: true },
      temperature: 0.2,
    });
  });

  test('send embeddings to the deployment’s embeddings path, with no credential of their own', () => {
    const request = azureOpenAIAdapter.embedding!.build({ model: 'embed-model', input: ['a', 'b'] }, azureTarget({ deployment: 'text-embedding-3-small' }));
    assert.equal(request.path, '/openai/deployments/text-embedding-3-small/embeddings?api-version=2024-10-21');
    assert.equal(request.headers['api-key'], undefined);
    assert.equal(request.headers.authorization, undefined);
    assert.deepEqual(JSON.parse(request.body!), { model: 'text-embedding-3-small', input: ['a', 'b'] });
  });

  test('the kind requires base_url and an api key, defaults api_version to 2024-10-21, and has embeddings', () => {
    const info = findProviderKind('azure-openai');
    assert.ok(info);
    const { kind, defaultBaseUrl, apiKeyRequired, defaultApiVersion, embeddings } = info;
    assert.deepEqual(
      { kind, defaultBaseUrl, apiKeyRequired, defaultApiVersion, embeddings },
      { kind: 'azure-openai', defaultBaseUrl: undefined, apiKeyRequired: true, defaultApiVersion: '2024-10-21', embeddings: true },
    );
  });
});

describe('azure-openai replies', () => {
  test('a non-stream reply loses prompt_filter_results and every choice’s content_filter_results, and keeps the rest', () => {
    const json = {
      id: 'chatcmpl-AZ1',
      object: 'chat.completion',
      created: 1_762_317_021,
      model: 'gpt-4o-mini-2024-07-18',
      prompt_filter_results: [{ prompt_index: 0, content_filter_results: FILTERS }],
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello.', refusal: null },
          finish_reason: 'stop',
          logprobs: null,
          content_filter_results: { ...FILTERS, protected_material_text: { filtered: false, detected: false } },
        },
      ],
      system_fingerprint: 'fp_azure',
      usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
    };
    const parsed = azureOpenAIAdapter.parseChatResponse(json, azureTarget());
    assert.equal(parsed.body.prompt_filter_results, undefined);
    const choices = parsed.body.choices as JsonObject[];
    assert.equal(choices[0]!.content_filter_results, undefined);
    assert.deepEqual(choices[0]!.message, { role: 'assistant', content: 'Hello.', refusal: null });
    assert.equal(choices[0]!.finish_reason, 'stop');
    assert.equal(parsed.body.model, 'chat-model', 'the client’s model id');
    assert.deepEqual(countsOf(parsed.usage?.tokens), { input: 9, cachedInput: 0, output: 2, reasoning: 0 });
  });

  test('a stream drops Azure’s prelude chunk and the filter verdicts, and keeps the real id, created and usage', () => {
    const lines = readFileSync(new URL('openai/azure-model-router.1.chunks.txt', FIXTURES), 'utf8').split('\n').filter((l) => l.trim() !== '');
    const translator = azureOpenAIAdapter.createChatStreamTranslator(azureTarget());
    const relayed: JsonObject[] = [];
    const results = [...lines, '[DONE]'].map((line) => translator.onEvent(ev(line)));
    for (const chunk of results) if (chunk) relayed.push(chunk);
    assert.equal(results[0], null, 'the prelude (object "", choices [], prompt_filter_results) is not relayed');
    assert.equal(relayed.length, lines.length - 2, 'all but the prelude and the usage chunk');
    for (const chunk of relayed) {
      assert.equal(chunk.prompt_filter_results, undefined);
      for (const choice of chunk.choices as JsonObject[]) assert.equal(choice.content_filter_results, undefined, 'no content_filter_results');
      assert.equal(chunk.model, 'chat-model');
      assert.equal(chunk.object, 'chat.completion.chunk');
    }
    assert.equal(translator.id, 'chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt', 'not the prelude’s empty id');
    assert.equal(translator.created, 1762317021, 'not the prelude’s 0');
    assert.deepEqual(countsOf(translator.usage?.tokens), { input: 15, cachedInput: 0, output: 78, reasoning: 64 });
    assert.equal(translator.finished, true);
  });

  test('a prelude chunk alone is not taken for the usage chunk', () => {
    const translator = azureOpenAIAdapter.createChatStreamTranslator(azureTarget());
    const prelude = { choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: [{ prompt_index: 0, content_filter_results: FILTERS }] };
    assert.equal(translator.onEvent(ev(prelude)), null);
    assert.equal(translator.usage, null);
    assert.equal(translator.id, '');
  });

  test('an Azure error body keeps its status, message and code (content filter on the prompt)', () => {
    const body = {
      error: {
        message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
        type: null,
        param: 'prompt',
        code: 'content_filter',
        status: 400,
        innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: FILTERS },
      },
    };
    const failure = azureOpenAIAdapter.parseError(400, JSON.stringify(body), {});
    assert.equal(failure.status, 400);
    assert.equal(failure.code, 'content_filter');
    assert.equal(failure.param, 'prompt');
    assert.match(failure.message, /content management policy/);
  });

  test('an Azure 429 keeps its Retry-After', () => {
    const body = { error: { code: '429', message: 'Requests to the ChatCompletions_Create Operation have exceeded call rate limit. Please retry after 7 seconds.' } };
    const failure = azureOpenAIAdapter.parseError(429, JSON.stringify(body), { 'retry-after': '7' });
    assert.equal(failure.status, 429);
    assert.equal(failure.retryAfter, '7');
    assert.match(failure.message, /retry after 7 seconds/);
  });
});
