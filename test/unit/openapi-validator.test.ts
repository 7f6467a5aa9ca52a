// Shows the OpenAPI test validator both accepts recorded upstream bodies and rejects broken ones.
// `void`: node:test's test() returns a promise the runner tracks; the lint rule no-floating-promises wants that said.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { assertMatchesSchema, validateAgainst } from '../support/openapi.js';

const UPSTREAM_OPENAI = new URL('../fixtures/upstream/openai/', import.meta.url);

function readFixture(name: string): string {
  return readFileSync(new URL(name, UPSTREAM_OPENAI), 'utf8');
}

function readJsonFixture(name: string): Record<string, unknown> {
  return JSON.parse(readFixture(name)) as Record<string, unknown>;
}

/** One JSON value per line; recordings may lack a trailing newline, and blank lines are skipped. */
function readChunks(name: string): unknown[] {
  return readFixture(name)
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as unknown);
}

function completionBody(): Record<string, unknown> {
  return readJsonFixture('openai-text.json');
}

void test('a recorded OpenAI chat completion validates as CreateChatCompletionResponse', () => {
  assert.deepEqual(validateAgainst('CreateChatCompletionResponse', completionBody()), []);
  assertMatchesSchema('CreateChatCompletionResponse', completionBody());
});

void test('every recorded OpenAI stream chunk validates as CreateChatCompletionStreamResponse', () => {
  const chunks = readChunks('openai-text.chunks.txt');
  assert.ok(chunks.length > 100, `expected a full recording, got ${chunks.length} chunks`);
  chunks.forEach((chunk, i) => {
    assert.deepEqual(validateAgainst('CreateChatCompletionStreamResponse', chunk), [], `chunk ${i + 1}`);
  });
});

void test('the Azure prelude chunk with object "" is rejected as a stream chunk', () => {
  const [prelude] = readChunks('azure-model-router.1.chunks.txt');
  assert.equal((prelude as { object: unknown }).object, '');
  const errors = validateAgainst('CreateChatCompletionStreamResponse', prelude);
  assert.ok(errors.some((e) => e.startsWith('/object ')), errors.join('\n'));
});

void test('a chat completion without choices is rejected', () => {
  const { choices: _choices, ...withoutChoices } = completionBody();
  const errors = validateAgainst('CreateChatCompletionResponse', withoutChoices);
  assert.ok(errors.some((e) => e.includes("required property 'choices'")), errors.join('\n'));
});

void test('an error body missing any of message, type, param or code is rejected', () => {
  const complete = { message: 'Bad things', type: 'invalid_request_error', param: null, code: null };
  for (const key of ['message', 'type', 'param', 'code'] as const) {
    const error: Record<string, unknown> = { ...complete };
    delete error[key];
    const errors = validateAgainst('ErrorResponse', { error });
    assert.deepEqual(errors, [`/error must have required property '${key}'`]);
  }
});

void test('an error body with all four keys passes, with param and code null', () => {
  const body = { error: { message: 'Bad things', type: 'invalid_request_error', param: null, code: null } };
  assert.deepEqual(validateAgainst('ErrorResponse', body), []);
  assert.deepEqual(validateAgainst('ErrorResponse', readJsonFixture('reasoning-model-legacy-parameter-error.json')), []);
});

void test('a recorded OpenAI embeddings body validates as CreateEmbeddingResponse', () => {
  const body = readJsonFixture('openai-embedding.json');
  // The fixture is a whole response body (vectors shortened), not just a data array.
  assert.equal(body.object, 'list');
  assert.ok(Array.isArray(body.data) && body.usage !== undefined);
  assert.deepEqual(validateAgainst('CreateEmbeddingResponse', body), []);
});

void test('a model list whose entries carry extra fields validates as ListModelsResponse', () => {
  const body = { object: 'list', data: [{ id: 'm', object: 'model', created: 1, owned_by: 'x', extra: 1 }] };
  assert.deepEqual(validateAgainst('ListModelsResponse', body), []);
});

void test('a model list entry with a non-integer created is rejected', () => {
  const body = { object: 'list', data: [{ id: 'm', object: 'model', created: 'x', owned_by: 'x' }] };
  const errors = validateAgainst('ListModelsResponse', body);
  assert.ok(errors.some((e) => e.startsWith('/data/0/created ')), errors.join('\n'));
});

void test('a model entry that is not an object is rejected even though the document omits type: object', () => {
  assert.notDeepEqual(validateAgainst('Model', 'gpt-4o'), []);
  assert.notDeepEqual(validateAgainst('ListModelsResponse', { object: 'list', data: ['gpt-4o'] }), []);
});

void test('a chat completion whose usage carries an extra cost number still validates', () => {
  const body = completionBody();
  body.usage = { ...(body.usage as object), cost: 0.000123 };
  assert.deepEqual(validateAgainst('CreateChatCompletionResponse', body), []);
});

void test('a stream chunk with usage null validates, since the document marks it nullable', () => {
  const [first] = readChunks('openai-text.chunks.txt');
  assert.equal((first as { usage: unknown }).usage, null);
  assert.deepEqual(validateAgainst('CreateChatCompletionStreamResponse', first), []);
});

void test('assertMatchesSchema throws an AssertionError naming each error and quoting the value', () => {
  assert.throws(
    () => assertMatchesSchema('ErrorResponse', { error: { message: 'm', type: 't' } }),
    (err: unknown) => {
      assert.ok(err instanceof assert.AssertionError);
      assert.match(err.message, /does not match ErrorResponse/);
      assert.match(err.message, /\/error must have required property 'param'/);
      assert.match(err.message, /\/error must have required property 'code'/);
      assert.match(err.message, /"message": "m"/);
      return true;
    },
  );
});
