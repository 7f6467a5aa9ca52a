// OpenAI embeddings ⇄ Gemini batchEmbedContents.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../../../src/errors.js';
import { geminiAdapter } from '../../../src/providers/gemini/index.js';
import { UpstreamFailureError, type EmbeddingRequestBody, type JsonObject } from '../../../src/providers/types.js';
import { testProvider, testTarget } from '../../support/provider-fixture.js';

const TARGET = testTarget({
  provider: testProvider({ kind: 'gemini', basePath: '', apiKey: 'goog' }),
  upstreamModel: 'gemini-embedding-001',
  clientModel: 'embed',
});

function body(extra: JsonObject): EmbeddingRequestBody {
  return { model: 'embed', input: 'x', ...extra } as EmbeddingRequestBody;
}

void describe('gemini embeddings', () => {
  test('sends one batchEmbedContents request per input string, with outputDimensionality from dimensions', () => {
    const request = geminiAdapter.embedding!.build(body({ input: ['a', 'b'], dimensions: 256, encoding_format: 'base64' }), TARGET);
    assert.equal(request.path, '/v1beta/models/gemini-embedding-001:batchEmbedContents');
    assert.equal(request.headers['x-goog-api-key'], undefined, 'the transport signs it');
    assert.deepEqual(JSON.parse(request.body!), {
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'a' }] }, outputDimensionality: 256 },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'b' }] }, outputDimensionality: 256 },
      ],
    });
    assert.deepEqual(request.dropped, []);
  });

  test("takes a single string, passes Gemini's taskType and title, and lists other fields as dropped", () => {
    const request = geminiAdapter.embedding!.build(body({ input: 'q', taskType: 'RETRIEVAL_QUERY', title: 't', user: 'u' }), TARGET);
    assert.deepEqual(JSON.parse(request.body!), { requests: [{ model: 'models/gemini-embedding-001', content: { parts: [{ text: 'q' }] }, taskType: 'RETRIEVAL_QUERY', title: 't' }] });
    assert.deepEqual(request.dropped, ['user']);
  });

  test("rejects token-array input with a 400 on 'input' (Gemini takes text only)", () => {
    for (const input of [[1, 2, 3], [[1, 2]], ['a', 3]]) {
      assert.throws(
        () => geminiAdapter.embedding!.build(body({ input }), TARGET),
        (e: unknown) => e instanceof GatewayError && e.code === 'invalid_request' && e.param === 'input',
      );
    }
  });

  test('answers in the OpenAI shape with the client model and null usage (Gemini reports none)', () => {
    const parsed = geminiAdapter.embedding!.parse({ embeddings: [{ values: [0.5, -1] }, { values: [0, 2] }] }, body({ input: ['a', 'b'] }), TARGET);
    assert.deepEqual(parsed, {
      body: {
        object: 'list',
        data: [
          { object: 'embedding', index: 0, embedding: [0.5, -1] },
          { object: 'embedding', index: 1, embedding: [0, 2] },
        ],
        model: 'embed',
      },
      usage: null,
    });
  });

  test('encodes vectors as base64 float32 little-endian when the client asked for base64', () => {
    const parsed = geminiAdapter.embedding!.parse({ embeddings: [{ values: [1, -2.5] }] }, body({ encoding_format: 'base64' }), TARGET);
    const encoded = ((parsed.body.data as JsonObject[])[0]!.embedding) as string;
    const bytes = Buffer.from(encoded, 'base64');
    assert.deepEqual([bytes.readFloatLE(0), bytes.readFloatLE(4)], [1, -2.5]);
  });

  test('treats a missing vector, a wrong count or an error body as an upstream failure', () => {
    const fails = (json: unknown, input: unknown = 'x'): void => {
      assert.throws(() => geminiAdapter.embedding!.parse(json, body({ input }), TARGET), UpstreamFailureError);
    };
    fails({ embeddings: [{}] });
    fails({ embeddings: [{ values: [1] }] }, ['a', 'b']);
    fails({ error: { code: 400, message: 'bad', status: 'INVALID_ARGUMENT' } });
    fails('nope');
  });
});
