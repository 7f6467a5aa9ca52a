// Non-stream OpenAI-style responses (chat completions, embeddings) → the client's shape + usage.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseOpenAIChatResponse, parseOpenAIEmbeddingResponse } from '../../../src/providers/openai/response.js';
import { UpstreamFailureError, type EmbeddingRequestBody, type JsonObject } from '../../../src/providers/types.js';
import { testTarget } from '../../support/provider-fixture.js';
import { countsOf } from '../../support/token-counts.js';

const FIXTURES = new URL('../../fixtures/upstream/', import.meta.url);

const TARGET = testTarget();

function fixture(name: string): JsonObject {
  return JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as JsonObject;
}

/** Float32 little-endian bytes, base64, written independently of the code under test. */
function float32Base64(values: number[]): string {
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString('base64');
}

function embeddingBody(extra: Record<string, unknown> = {}): EmbeddingRequestBody {
  return { model: 'client-model', input: ['a', 'b'], ...extra } as EmbeddingRequestBody;
}

describe('parseOpenAIChatResponse', () => {
  test("replaces model with the client's and reads usage", () => {
    const json = fixture('openai/openai-text.json');
    const parsed = parseOpenAIChatResponse(json, TARGET);
    assert.equal(parsed.body.model, 'client-model');
    assert.equal(parsed.usage!.tokens.input, (json.usage as { prompt_tokens: number }).prompt_tokens);
  });

  test('normalises xAI usage and keeps reasoning_content (recorded)', () => {
    const parsed = parseOpenAIChatResponse(fixture('openai-compatible/xai-tool-call.json'), TARGET);
    assert.deepEqual(countsOf(parsed.usage!.tokens), { input: 307, cachedInput: 244, output: 281, reasoning: 255 });
    const message = (parsed.body.choices as JsonObject[])[0]!.message as JsonObject;
    assert.equal(typeof message.reasoning_content, 'string');
  });

  test("renames vLLM's message.reasoning, adds a missing tool call type and drops a null system_fingerprint", () => {
    const json: JsonObject = {
      id: 'cmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'upstream-model',
      system_fingerprint: null,
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: { role: 'assistant', content: null, reasoning: 'think', tool_calls: [{ id: 'c1', function: { name: 'f', arguments: '{}' } }] },
        },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
    };
    const parsed = parseOpenAIChatResponse(json, TARGET);
    assert.equal('system_fingerprint' in parsed.body, false);
    assert.deepEqual((parsed.body.choices as JsonObject[])[0]!.message, {
      role: 'assistant',
      content: null,
      reasoning_content: 'think',
      tool_calls: [{ id: 'c1', function: { name: 'f', arguments: '{}' }, type: 'function' }],
    });
  });

  test('gives null usage when the upstream sent none', () => {
    const parsed = parseOpenAIChatResponse({ id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [] }, TARGET);
    assert.equal(parsed.usage, null);
  });

  test('throws UpstreamFailureError for an error body sent with status 200', () => {
    assert.throws(
      () => parseOpenAIChatResponse({ error: { message: 'context too long', type: 'invalid_request_error', code: 'context_length_exceeded' } }, TARGET),
      (error: unknown) =>
        error instanceof UpstreamFailureError && error.failure.message === 'context too long' && error.failure.code === 'context_length_exceeded',
    );
  });

  test('throws UpstreamFailureError 502 for a body that is not a chat completion', () => {
    for (const json of [null, 'text', [], { id: 'x' }, { choices: 'no' }]) {
      assert.throws(
        () => parseOpenAIChatResponse(json, TARGET),
        (error: unknown) => error instanceof UpstreamFailureError && error.failure.status === 502,
        JSON.stringify(json),
      );
    }
  });
});

describe('parseOpenAIEmbeddingResponse', () => {
  test('converts float arrays to base64 float32 little-endian when encoding_format is base64', () => {
    const json = fixture('openai/openai-embedding.json');
    const floats = ((json.data as JsonObject[]).map((d) => [...(d.embedding as number[])]));
    const parsed = parseOpenAIEmbeddingResponse(json, embeddingBody({ encoding_format: 'base64' }), TARGET);
    const data = parsed.body.data as JsonObject[];
    assert.equal(data[0]!.embedding, float32Base64(floats[0]!));
    assert.equal(data[1]!.embedding, float32Base64(floats[1]!));
    const decoded = Buffer.from(data[0]!.embedding as string, 'base64');
    assert.equal(decoded.length, 5 * 4);
    assert.equal(decoded.readFloatLE(0), Math.fround(0.0057293195));
  });

  test('encodes exactly representable values to known bytes', () => {
    const json = { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [1, -2.5, 0.25] }], model: 'm', usage: { prompt_tokens: 1, total_tokens: 1 } };
    const parsed = parseOpenAIEmbeddingResponse(json, embeddingBody({ encoding_format: 'base64' }), TARGET);
    // 1.0 = 00 00 80 3f, -2.5 = 00 00 20 c0, 0.25 = 00 00 80 3e
    assert.equal((parsed.body.data as JsonObject[])[0]!.embedding, Buffer.from('0000803f000020c00000803e', 'hex').toString('base64'));
  });

  test('leaves float arrays alone for encoding_format float or none', () => {
    for (const extra of [{}, { encoding_format: 'float' }]) {
      const json = fixture('openai/openai-embedding.json');
      const expected = structuredClone(json.data);
      const parsed = parseOpenAIEmbeddingResponse(json, embeddingBody(extra), TARGET);
      assert.deepEqual(parsed.body.data, expected);
    }
  });

  test('leaves an embedding the server already sent as base64 alone', () => {
    const json = { object: 'list', data: [{ object: 'embedding', index: 0, embedding: 'AACAPw==' }], model: 'm', usage: { prompt_tokens: 1, total_tokens: 1 } };
    const parsed = parseOpenAIEmbeddingResponse(json, embeddingBody({ encoding_format: 'base64' }), TARGET);
    assert.equal((parsed.body.data as JsonObject[])[0]!.embedding, 'AACAPw==');
  });

  test("replaces model with the client's and reports input-only usage", () => {
    const parsed = parseOpenAIEmbeddingResponse(fixture('openai/openai-embedding.json'), embeddingBody(), TARGET);
    assert.equal(parsed.body.model, 'client-model');
    assert.deepEqual(parsed.usage, {
      tokens: { input: 12, cachedInput: 0, output: 0, reasoning: 0 },
      openai: { prompt_tokens: 12, total_tokens: 12 },
    });
  });

  test('gives null usage when the server reports none', () => {
    const parsed = parseOpenAIEmbeddingResponse({ object: 'list', data: [], model: 'm' }, embeddingBody(), TARGET);
    assert.equal(parsed.usage, null);
  });

  test('throws UpstreamFailureError for an error body or a malformed one', () => {
    assert.throws(
      () => parseOpenAIEmbeddingResponse({ error: { message: 'bad input' } }, embeddingBody(), TARGET),
      (error: unknown) => error instanceof UpstreamFailureError && error.failure.message === 'bad input',
    );
    assert.throws(
      () => parseOpenAIEmbeddingResponse({ object: 'list' }, embeddingBody(), TARGET),
      (error: unknown) => error instanceof UpstreamFailureError && error.failure.status === 502,
    );
  });
});
