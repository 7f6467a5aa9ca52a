// The JSON body parser's nesting limit: counted levels, the boundary, and no stack growth on deep input;
// the ordinary body parsed without Fastify's parser, and every body with a suspect key still judged by it;
// the bytes kept for a native cell only when they are valid UTF-8.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Fastify, { type FastifyRequest } from 'fastify';
import { GatewayError } from '../../../src/errors.js';
import { depthLimitedJsonParser, keepingBytes, MAX_JSON_DEPTH, nestsDeeperThan, type JsonBodyParser } from '../../../src/http/json-body.js';

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

describe("depthLimitedJsonParser's own parse", () => {
  const fastifyParse = Fastify().getDefaultJsonParser('error', 'error') as JsonBodyParser;

  function run(body: string, parse = fastifyParse): { error: Error | null; value: unknown; delegated: boolean } {
    let delegated = false;
    const spy: JsonBodyParser = (request, text, done) => {
      delegated = true;
      parse(request, text, done);
    };
    let result: { error: Error | null; value: unknown } | undefined;
    depthLimitedJsonParser(spy)({} as FastifyRequest, body, (error, value) => (result = { error, value }));
    assert.ok(result, 'answered synchronously');
    return { ...result, delegated };
  }

  test('an ordinary body never reaches the wrapped parser', () => {
    assert.deepEqual(run('{"model":"m","messages":[{"role":"user","content":"constructor __proto__"}]}'), {
      error: null,
      value: { model: 'm', messages: [{ role: 'user', content: 'constructor __proto__' }] },
      delegated: false,
    });
  });

  test("a __proto__ or constructor key, anywhere, goes to Fastify's parser, which decides as before", () => {
    const refused = (body: string) => {
      const result = run(body);
      assert.ok(result.delegated, body);
      assert.equal((result.error as { code?: string } | null)?.code, 'FST_ERR_CTP_INVALID_JSON_BODY', body);
    };
    refused('{"a":[{"__proto__":{"admin":true}}]}');
    refused('{"\\u005f_proto__":{}}');
    refused('{"x":{"constructor":{"prototype":{}}}}');
    assert.deepEqual(run('{"constructor":"a string is harmless"}'), { error: null, value: { constructor: 'a string is harmless' }, delegated: true });
  });

  test("what V8 cannot parse (empty, invalid, a byte-order mark) gets the wrapped parser's answer", () => {
    assert.ok(run('').delegated);
    assert.equal((run('') as { error: { code?: string } }).error.code, 'FST_ERR_CTP_EMPTY_JSON_BODY');
    assert.ok(run('{"a":').error);
    assert.deepEqual(run('\ufeff{"a":1}'), { error: null, value: { a: 1 }, delegated: true });
  });
});

describe('keepingBytes', () => {
  function read(bytes: Buffer): { request: FastifyRequest; text: string } {
    const request = {} as FastifyRequest;
    let text = '';
    keepingBytes((_request, body, done) => {
      text = body;
      done(null, undefined);
    })(request, bytes, () => {});
    return { request, text };
  }

  test('keeps valid UTF-8 with the text read from it; invalid UTF-8 is decoded as before and not kept', () => {
    const valid = read(Buffer.from('{"text":"café"}'));
    assert.equal(valid.request.rawBytes?.bytes.toString('utf8'), '{"text":"café"}');
    assert.deepEqual(JSON.parse(valid.text), { text: 'café' });
    const invalid = read(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]));
    assert.equal(invalid.request.rawBytes, undefined);
    assert.equal(invalid.text, '{"a":"\ufffd"}');
  });
});
