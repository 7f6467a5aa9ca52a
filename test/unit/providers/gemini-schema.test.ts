// JSON Schema → Gemini Schema (the OpenAPI 3.0 subset generateContent accepts in tools and responseSchema).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_RECURSION, toGeminiSchema } from '../../../src/providers/gemini/schema.js';
import type { JsonObject } from '../../../src/providers/types.js';

/** How many levels a self-referencing `child` unrolls to before the cut. */
function depthOf(schema: JsonObject, key: string): number {
  let depth = 0;
  let node: unknown = schema;
  while (node && typeof node === 'object' && (node as JsonObject).properties) {
    node = ((node as JsonObject).properties as JsonObject)[key];
    depth++;
  }
  return depth;
}

void describe('toGeminiSchema', () => {
  test('keeps every keyword Gemini knows, unchanged', () => {
    const schema = {
      type: 'object',
      title: 'Order',
      description: 'An order',
      properties: {
        id: { type: 'string', format: 'uuid', pattern: '^[a-f0-9-]+$', minLength: 36, maxLength: 36 },
        qty: { type: 'integer', minimum: 1, maximum: 10, default: 1 },
        tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, minItems: 0, maxItems: 5 },
        meta: { type: 'object', properties: { k: { type: 'string' } }, minProperties: 1, maxProperties: 3 },
      },
      required: ['id', 'qty'],
      propertyOrdering: ['id', 'qty', 'tags', 'meta'],
    };
    assert.deepEqual(toGeminiSchema(schema), schema);
  });

  test('drops what Gemini rejects: additionalProperties, $schema, strict, examples, $defs, unknown keywords', () => {
    const out = toGeminiSchema({
      $schema: 'http://json-schema.org/draft-07/schema#',
      $id: 'x',
      type: 'object',
      strict: true,
      additionalProperties: false,
      examples: [{ a: 'x' }],
      $defs: { unused: { type: 'string' } },
      properties: { a: { type: 'string', examples: ['x'], 'x-vendor': 1, exclusiveMinimum: 3, contentEncoding: 'base64' } },
    });
    assert.deepEqual(out, { type: 'object', properties: { a: { type: 'string' } } });
  });

  test("turns type ['string', 'null'] into type string + nullable", () => {
    assert.deepEqual(toGeminiSchema({ type: ['string', 'null'], description: 'd' }), { type: 'string', description: 'd', nullable: true });
  });

  test('turns several non-null types into anyOf branches, keeping description at the top', () => {
    assert.deepEqual(toGeminiSchema({ type: ['string', 'integer', 'null'], description: 'id', minimum: 0 }), {
      anyOf: [
        { type: 'string', minimum: 0 },
        { type: 'integer', minimum: 0 },
      ],
      description: 'id',
      nullable: true,
    });
  });

  test('turns anyOf [T, {type: null}] (an Optional) into T + nullable, keeping the outer description', () => {
    const out = toGeminiSchema({ anyOf: [{ type: 'string', description: 'inner' }, { type: 'null' }], description: 'outer' });
    assert.deepEqual(out, { type: 'string', description: 'outer', nullable: true });
  });

  test('keeps anyOf with several real branches and reads oneOf as anyOf', () => {
    assert.deepEqual(toGeminiSchema({ oneOf: [{ type: 'string' }, { type: 'number', additionalProperties: 1 }] }), {
      anyOf: [{ type: 'string' }, { type: 'number' }],
    });
  });

  test('writes const as a one-value enum, and enum values as strings (Gemini enums are string lists)', () => {
    assert.deepEqual(toGeminiSchema({ const: 'fixed' }), { type: 'string', enum: ['fixed'] });
    assert.deepEqual(toGeminiSchema({ type: 'integer', enum: [1, 2, 3] }), { type: 'integer', enum: ['1', '2', '3'] });
    assert.deepEqual(toGeminiSchema({ enum: ['a', null] }), { type: 'string', enum: ['a'], nullable: true });
  });

  test('inlines local $refs into $defs and definitions, with keywords beside the $ref winning', () => {
    const out = toGeminiSchema({
      type: 'object',
      properties: {
        from: { $ref: '#/$defs/Address', description: 'Sender' },
        to: { $ref: '#/definitions/Address' },
      },
      $defs: { Address: { type: 'object', description: 'An address', properties: { city: { type: 'string' } }, additionalProperties: false } },
      definitions: { Address: { type: 'object', properties: { zip: { type: 'string' } } } },
    });
    assert.deepEqual(out, {
      type: 'object',
      properties: {
        from: { type: 'object', description: 'Sender', properties: { city: { type: 'string' } } },
        to: { type: 'object', properties: { zip: { type: 'string' } } },
      },
    });
  });

  test('resolves JSON-pointer escapes (~1 for /, ~0 for ~) in $ref', () => {
    const out = toGeminiSchema({ properties: { a: { $ref: '#/$defs/a~1b~0c' } }, $defs: { 'a/b~c': { type: 'boolean' } } });
    assert.deepEqual(out, { properties: { a: { type: 'boolean' } } });
  });

  test(`unrolls a self-referencing schema ${MAX_RECURSION} levels deep and then stops, without throwing`, () => {
    const tree = { $ref: '#/$defs/Node', $defs: { Node: { type: 'object', properties: { child: { $ref: '#/$defs/Node' } } } } };
    const out = toGeminiSchema(tree);
    assert.equal(depthOf(out, 'child'), MAX_RECURSION);
    assert.ok(JSON.stringify(out).length < 1000);
  });

  test('keeps a node with two recursive children small (the limit is per $ref, not exponential)', () => {
    const node = { type: 'object', properties: { left: { $ref: '#' }, right: { $ref: '#' }, value: { type: 'number' } } };
    const size = JSON.stringify(toGeminiSchema(node)).length;
    assert.ok(size < 5_000, `schema grew to ${size} characters`);
  });

  test('survives a $ref that points at itself directly', () => {
    assert.deepEqual(toGeminiSchema({ $ref: '#/$defs/A', $defs: { A: { $ref: '#/$defs/A' } } }), { type: 'object' });
  });

  test('drops a $ref it cannot resolve (remote or missing) and keeps the keywords beside it', () => {
    assert.deepEqual(toGeminiSchema({ properties: { a: { $ref: 'https://example.com/s.json', description: 'd' }, b: { $ref: '#/$defs/Missing' } } }), {
      properties: { a: { description: 'd' }, b: {} },
    });
  });

  test('merges allOf members into one schema (properties and required united)', () => {
    const out = toGeminiSchema({
      allOf: [
        { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
        { properties: { b: { type: 'number' } }, required: ['b'] },
      ],
      description: 'both',
    });
    assert.deepEqual(out, { type: 'object', description: 'both', properties: { a: { type: 'string' }, b: { type: 'number' } }, required: ['a', 'b'] });
  });

  test('drops an empty properties map and required names that are not declared', () => {
    assert.deepEqual(toGeminiSchema({ type: 'object', properties: {}, required: [] }), { type: 'object' });
    assert.deepEqual(toGeminiSchema({ type: 'object', properties: { a: { type: 'string' } }, required: ['a', 'ghost', 3] }), {
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
    });
  });

  test("keeps properties named like Object.prototype members ('__proto__', 'toString') as plain properties", () => {
    const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"},"toString":{"type":"number"}},"required":["__proto__","toString","constructor"]}') as JsonObject;
    assert.equal(
      JSON.stringify(toGeminiSchema(schema)),
      '{"type":"object","properties":{"__proto__":{"type":"string"},"toString":{"type":"number"}},"required":["__proto__","toString"]}',
    );
  });

  test('turns tuple-style items into alternatives and converts nested items', () => {
    assert.deepEqual(toGeminiSchema({ type: 'array', items: [{ type: 'string' }, { type: 'integer' }] }), {
      type: 'array',
      items: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
    });
    assert.deepEqual(toGeminiSchema({ type: 'array', items: { type: ['number', 'null'] } }), { type: 'array', items: { type: 'number', nullable: true } });
  });

  test('drops unknown types and malformed keyword values rather than sending them', () => {
    assert.deepEqual(toGeminiSchema({ type: 'date', minItems: -1, maxLength: 1.5, minimum: 'x', description: 3 }), {});
  });

  test('returns an empty schema for anything that is not an object, and cuts absurd nesting', () => {
    assert.deepEqual(toGeminiSchema(true), {});
    assert.deepEqual(toGeminiSchema(null), {});
    let deep: JsonObject = { type: 'string' };
    for (let i = 0; i < 10_000; i++) deep = { type: 'array', items: deep };
    assert.doesNotThrow(() => toGeminiSchema(deep));
  });

  test('does not modify the schema it is given', () => {
    const schema = { type: ['string', 'null'], $defs: { A: { type: 'string' } }, properties: { a: { $ref: '#/$defs/A' } } };
    const copy = structuredClone(schema);
    toGeminiSchema(schema);
    assert.deepEqual(schema, copy);
  });
});
