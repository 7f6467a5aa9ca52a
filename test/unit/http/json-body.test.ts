// The JSON body parser's nesting limit: counted levels, the boundary, and no stack growth on deep input.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../../../src/errors.js';
import { depthLimitedJsonParser, MAX_JSON_DEPTH, nestsDeeperThan, type JsonBodyParser } from '../../../src/http/json-body.js';

/** `levels` containers, alternating objects and arrays, the outermost an object. */
function nested(levels: number): object {
  let value: object = {};
  for (let level = levels - 1; level >= 1; level--) value = level % 2 === 0 ? [value] : { a: value };
  return value;
}

describe('nestsDeeperThan', () => {
  test('counts the top-level container as level 1, through objects and arrays alike', () => {
    assert.equal(nestsDeeperThan({}, 1), false);
    assert.equal(nestsDeeperThan({ a: {} }, 1), true);
    assert.equal(nestsDeeperThan({ a: [1, 'x', null, { b: [] }] }, 3), true);
    assert.equal(nestsDeeperThan({ a: [1, 'x', null, { b: [] }] }, 4), false);
    assert.equal(nestsDeeperThan([[[]]], 3), false);
    assert.equal(nestsDeeperThan([[[]]], 2), true);
  });

  test('accepts exactly the limit and refuses one level more', () => {
    assert.equal(nestsDeeperThan(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH), false);
    assert.equal(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH), true);
  });

  test('finds a deep branch after shallow siblings, and primitives never count as a level', () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }], tags: ['x', 1, true, null], extra: nested(200) };
    assert.equal(nestsDeeperThan(body, MAX_JSON_DEPTH), true);
    assert.equal(nestsDeeperThan({ input: Array.from({ length: 1000 }, (_, i) => i) }, 2), false);
  });

  test('answers for a million levels without overflowing the stack (it stops at the limit)', () => {
    const text = `{"a":${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}}`;
    assert.equal(nestsDeeperThan(JSON.parse(text) as object, MAX_JSON_DEPTH), true);
  });
});

describe('depthLimitedJsonParser', () => {
  const request = {} as FastifyRequest;
  const plainParse: JsonBodyParser = (_request, body, done) => {
    try {
      done(null, JSON.parse(body));
    } catch (error) {
      done(error as Error);
    }
  };

  function run(parser: JsonBodyParser, body: string): { error: Error | null; value: unknown } {
    let result: { error: Error | null; value: unknown } | undefined;
    parser(request, body, (error, value) => (result = { error, value }));
    assert.ok(result, 'the parser answered synchronously');
    return result;
  }

  test('passes a body within the limit through unchanged', () => {
    const { error, value } = run(depthLimitedJsonParser(plainParse), JSON.stringify({ a: nested(MAX_JSON_DEPTH - 1) }));
    assert.equal(error, null);
    assert.deepEqual(value, { a: nested(MAX_JSON_DEPTH - 1) });
  });

  test('turns a body nested past the limit into 400 invalid_request naming the limit', () => {
    const { error, value } = run(depthLimitedJsonParser(plainParse, 3), '{"a":[{"b":[1]}]}');
    assert.equal(value, undefined);
    assert.ok(error instanceof GatewayError);
    assert.equal(error.code, 'invalid_request');
    assert.equal(error.status, 400);
    assert.match(error.message, /deeper than 3 levels/);
  });

  test("keeps the wrapped parser's own errors, and scalars are never too deep", () => {
    const syntax = run(depthLimitedJsonParser(plainParse), '{"a":');
    assert.ok(syntax.error instanceof SyntaxError);
    assert.deepEqual(run(depthLimitedJsonParser(plainParse, 1), '"text"'), { error: null, value: 'text' });
  });
});
