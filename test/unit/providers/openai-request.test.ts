// Upstream requests for OpenAI-style servers: the client body forwarded whole, only `model` replaced.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { ProviderConfig } from '../../../src/config/types.js';
import { buildOpenAIChatRequest, buildOpenAIEmbeddingRequest } from '../../../src/providers/openai/request.js';
import type { ChatRequestBody, EmbeddingRequestBody, UpstreamTarget } from '../../../src/providers/types.js';
import { testProvider, testTarget } from '../../support/provider-fixture.js';

/** gpt-4o-mini on an `openai` provider with key sk-provider-secret; `provider` changes what a test is about. */
function target(provider: Partial<ProviderConfig> = {}): UpstreamTarget {
  return testTarget({
    provider: testProvider({ apiKey: 'sk-provider-secret', ...provider }),
    upstreamModel: 'gpt-4o-mini-2024-07-18',
    clientModel: 'gpt-4o-mini',
  });
}

function chatBody(extra: Record<string, unknown> = {}): ChatRequestBody {
  return { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], ...extra } as ChatRequestBody;
}

describe('buildOpenAIChatRequest', () => {
  test('replaces only model and keeps every other field byte for byte', () => {
    const body = chatBody({
      temperature: 0.7,
      top_p: 1,
      seed: 42,
      logit_bias: { '50256': -100 },
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} }, strict: true } }],
      tool_choice: 'auto',
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
      reasoning_effort: 'low',
      max_completion_tokens: 100,
      metadata: { user: 'ü 日本 😀' },
      some_vendor_extension: { nested: [1, null, 'two', { three: false }] },
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
      ],
    });
    const request = buildOpenAIChatRequest(body, target());
    assert.equal(request.body, JSON.stringify({ ...body, model: 'gpt-4o-mini-2024-07-18' }));
    const sent = JSON.parse(request.body!) as Record<string, unknown>;
    assert.deepEqual(Object.keys(sent), Object.keys(body), 'field order is kept');
    assert.equal(sent.model, 'gpt-4o-mini-2024-07-18');
  });

  test("does not modify the client's body object", () => {
    const body = chatBody({ stream: true, stream_options: { continuous_usage_stats: true } });
    const before = structuredClone(body);
    buildOpenAIChatRequest(body, target());
    assert.deepEqual(body, before);
  });

  test('posts to basePath + /chat/completions', () => {
    assert.equal(buildOpenAIChatRequest(chatBody(), target()).path, '/v1/chat/completions');
    assert.equal(buildOpenAIChatRequest(chatBody(), target({ basePath: '' })).path, '/chat/completions');
    assert.equal(buildOpenAIChatRequest(chatBody(), target({ basePath: '/api/openai/v1' })).path, '/api/openai/v1/chat/completions');
    assert.equal(buildOpenAIChatRequest(chatBody(), target()).method, 'POST');
  });

  test('sets stream_options.include_usage on a stream', () => {
    const request = buildOpenAIChatRequest(chatBody({ stream: true }), target());
    const sent = JSON.parse(request.body!) as Record<string, unknown>;
    assert.deepEqual(sent.stream_options, { include_usage: true });
    assert.equal(sent.stream, true);
    assert.equal(request.headers.accept, 'text/event-stream');
  });

  test("keeps the client's other stream_options and overrides include_usage: false", () => {
    const sent = JSON.parse(
      buildOpenAIChatRequest(chatBody({ stream: true, stream_options: { include_usage: false, continuous_usage_stats: true } }), target()).body!,
    ) as Record<string, unknown>;
    assert.deepEqual(sent.stream_options, { include_usage: true, continuous_usage_stats: true });
  });

  test('leaves a non-stream body untouched apart from model', () => {
    for (const extra of [{}, { stream: false }, { stream: false, stream_options: { include_usage: false } }, { stream: null }]) {
      const body = chatBody(extra);
      const request = buildOpenAIChatRequest(body, target());
      assert.equal(request.body, JSON.stringify({ ...body, model: 'gpt-4o-mini-2024-07-18' }), JSON.stringify(extra));
      assert.equal(request.headers.accept, 'application/json');
    }
  });

  test('writes no credential: the transport signs each attempt (upstream/auth.ts)', () => {
    assert.deepEqual(buildOpenAIChatRequest(chatBody(), target()).headers, { 'content-type': 'application/json', accept: 'application/json' });
  });
});

describe('buildOpenAIEmbeddingRequest', () => {
  test('posts to basePath + /embeddings with only model replaced', () => {
    const body = { model: 'text-embedding-3-small', input: ['a', 'b'], encoding_format: 'base64', dimensions: 256, user: 'u1' } as EmbeddingRequestBody;
    const request = buildOpenAIEmbeddingRequest(body, { ...target(), upstreamModel: 'text-embedding-3-small-v2' });
    assert.equal(request.method, 'POST');
    assert.equal(request.path, '/v1/embeddings');
    assert.equal(request.body, JSON.stringify({ ...body, model: 'text-embedding-3-small-v2' }));
    assert.equal(request.headers.authorization, undefined);
    assert.equal(request.headers.accept, 'application/json');
  });
});
