// The body parser of the APIs with native cells (src/api/body-by-members.ts) and the parsed blocks it
// remembers (src/api/parsed-blocks.ts): the object JSON.parse makes, assembled member by member with the
// repeated blocks of an agent's turn taken from memory; anything not plainly parseable left to the
// server's parser, whose verdict stays the gateway's.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import Fastify, { type FastifyRequest } from 'fastify';
import { BY_MEMBERS_MIN_BYTES, byMembers, parseByMembers } from '../../../src/api/body-by-members.js';
import { byteFingerprint, ParsedBlocks, REMEMBERED_MIN_BYTES } from '../../../src/api/parsed-blocks.js';
import { rawLayoutOf, splicedRaw } from '../../../src/api/raw-body.js';
import { gatewayJsonParser, MAX_JSON_DEPTH, type JsonBytesParser } from '../../../src/http/json-body.js';

const fixture = (name: string): Buffer => readFileSync(new URL(`../../fixtures/agents/${name}`, import.meta.url));
const RECORDED = ['claude-code-2.1.197-turn1.json', 'claude-code-2.1.197-turn2.json', 'codex-0.171.0-turn1.json', 'codex-0.171.0-turn2.json'];

/** Parsed member by member, and what JSON.parse makes of the same bytes: equal, keys in the same order. */
function assertSameAsJsonParse(bytes: Buffer, blocks = new ParsedBlocks()): Record<string, unknown> {
  const laid = parseByMembers(bytes, MAX_JSON_DEPTH, blocks);
  assert.ok(laid, bytes.toString('utf8').slice(0, 80));
  const expected = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  assert.deepStrictEqual(laid.value, expected);
  assert.deepEqual(Object.keys(laid.value), Object.keys(expected), 'the keys in the order JSON.parse gives them');
  return laid.value;
}

const long = (n: number, from = 'x'): string => from.repeat(n);

describe('parseByMembers', () => {
  test('the recorded Claude Code and Codex turns: what JSON.parse makes, the first time and from memory', () => {
    for (const name of RECORDED) {
      const blocks = new ParsedBlocks();
      const first = assertSameAsJsonParse(fixture(name), blocks);
      assert.ok(blocks.size > 0, `${name}: its large blocks are remembered`);
      const again = assertSameAsJsonParse(fixture(name), blocks);
      // The repeated blocks are the very values parsed the first time, frozen: nothing parsed twice.
      const shared = Object.keys(first).filter((key) => Array.isArray(first[key]) && (first[key] as unknown[]).some((item, i) => item === (again[key] as unknown[])[i] && typeof item === 'object'));
      assert.ok(shared.length > 0, `${name}: an element came from memory`);
    }
  });

  test("turn 2 takes turn 1's tool definitions and system blocks from memory", () => {
    const blocks = new ParsedBlocks();
    const turn1 = parseByMembers(fixture('claude-code-2.1.197-turn1.json'), MAX_JSON_DEPTH, blocks)!.value;
    const turn2 = parseByMembers(fixture('claude-code-2.1.197-turn2.json'), MAX_JSON_DEPTH, blocks)!.value;
    const tools1 = turn1.tools as object[];
    const tools2 = turn2.tools as object[];
    assert.equal(tools2.length, tools1.length);
    assert.ok(tools2.every((tool, i) => tool === tools1[i] || JSON.stringify(tool).length < REMEMBERED_MIN_BYTES));
  });

  test('spacing, number spellings, escapes, non-ASCII text, a repeated key (the last kept, in the first place)', () => {
    const texts = [
      '{ "model" : "m",\n\t"max_tokens": 1.0e2, "n": -0, "big": 12345678901234567890, "t": true, "f": false, "z": null }',
      '{"model":"a","input":"ü","model":"b"}',
      `{"system":"Réponds en français — 日本 \u{1F600}","messages":[{"role":"user","content":"caf\\u00e9 \\"q\\" \\\\ \\/ \\n"}],"e":[],"o":{}}`,
      '{"\\u006dodel":"escaped key","tools":[{"name":"x","description":"' + long(2000, 'é') + '"}]}',
      '{"0":"integer-like keys come first","b":1,"1":2}',
      '{}',
      ' {"a" : [ 1 , [ 2 , { "b" : [ ] } ] , "x" ] } ',
    ];
    for (const text of texts) assertSameAsJsonParse(Buffer.from(text));
  });

  test('a remembered value is frozen all the way down: changing it throws instead of reaching another request', () => {
    const blocks = new ParsedBlocks();
    const tool = { name: 'big', input_schema: { type: 'object', properties: { a: { description: long(2000) } } } };
    const bytes = Buffer.from(JSON.stringify({ tools: [tool] }));
    const tools = parseByMembers(bytes, MAX_JSON_DEPTH, blocks)!.value.tools as Array<typeof tool>;
    assert.ok(Object.isFrozen(tools[0]) && Object.isFrozen(tools[0]!.input_schema.properties.a));
    assert.throws(() => {
      tools[0]!.name = 'changed';
    }, TypeError);
    // The array around it is the request's own.
    tools.push(tool);
    assert.equal((parseByMembers(bytes, MAX_JSON_DEPTH, blocks)!.value.tools as unknown[]).length, 1);
  });

  test("leaves to the server's parser what it does not accept plainly", () => {
    const refused = [
      '',
      '[1,2]',
      '"text"',
      '\ufeff{"a":1}',
      '{"a":1,}',
      '{"a":[1,]}',
      '{"a":}',
      '{"a":tru}',
      '{"a":01}',
      '{"a":"raw\ncontrol character"}',
      '{"a":1} {"b":2}',
      '{"a":1',
      '{"__proto__":{"admin":true}}',
      '{"constructor":"harmless, but the server parser decides"}',
      '{"messages":[{"role":"user","content":[{"__proto__":{"x":1}}]}]}',
      `{"tools":[{"x":{"constructor":{"prototype":{}}},"pad":"${long(2000)}"}]}`,
      '{"modèl":"a non-ASCII key"}',
    ];
    for (const text of refused) assert.equal(parseByMembers(Buffer.from(text), MAX_JSON_DEPTH, new ParsedBlocks()), undefined, text);
  });

  test('nesting: exactly the server parser limit passes, one level more is left to it', () => {
    // The top-level object is level 1; the member's array 2; each [ below it one more.
    const at = (levels: number) => Buffer.from(`{"a":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`);
    assert.ok(parseByMembers(at(MAX_JSON_DEPTH), MAX_JSON_DEPTH, new ParsedBlocks()));
    assert.equal(parseByMembers(at(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH, new ParsedBlocks()), undefined);
    const object = (levels: number) => Buffer.from(`{"a":${'{"b":'.repeat(levels - 1)}1${'}'.repeat(levels - 1)}}`);
    assert.ok(parseByMembers(object(MAX_JSON_DEPTH), MAX_JSON_DEPTH, new ParsedBlocks()));
    assert.equal(parseByMembers(object(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH, new ParsedBlocks()), undefined);
  });

  test('the layout it found serves the native cell: the bytes forwarded with only model replaced', () => {
    const bytes = fixture('claude-code-2.1.197-turn1.json');
    const parser = byMembers(() => assert.fail('a large valid body is not parsed whole'));
    let body: object | undefined;
    parser({} as FastifyRequest, bytes, (error, value) => {
      assert.equal(error, null);
      body = value as object;
    });
    const layout = rawLayoutOf(body!);
    const model = layout!.members.find((member) => member.key === 'model')!;
    const pieces = splicedRaw(body!, [model.value], '"upstream-model"') as Uint8Array[];
    const text = bytes.toString('utf8');
    assert.equal(Buffer.concat(pieces).toString('utf8'), text.replace(`"${(JSON.parse(text) as { model: string }).model}"`, '"upstream-model"'));
  });
});

describe('byMembers', () => {
  const fastify = Fastify();
  const whole = gatewayJsonParser(fastify);

  function run(bytes: Buffer): { error: Error | null; value: unknown; delegated: boolean } {
    let delegated = false;
    const spy: JsonBytesParser = (request, body, done) => {
      delegated = true;
      whole(request, body, done);
    };
    let result: { error: Error | null; value: unknown } | undefined;
    byMembers(spy)({} as FastifyRequest, bytes, (error, value) => (result = { error, value }));
    assert.ok(result, 'answered synchronously');
    return { ...result, delegated };
  }

  const padded = (json: string) => json.replace(/^\{/, `{"pad":"${long(BY_MEMBERS_MIN_BYTES)}",`);

  test('a small body is parsed whole; a large one member by member, to the same value', () => {
    assert.equal(run(Buffer.from('{"model":"m"}')).delegated, true);
    const large = run(Buffer.from(padded('{"model":"m","messages":[{"role":"user","content":"hi"}]}')));
    assert.equal(large.delegated, false);
    assert.deepEqual(Object.keys(large.value as object), ['pad', 'model', 'messages']);
  });

  test("a large body with a poisoned key, invalid JSON, too deep or not UTF-8 gets the server parser's verdict", () => {
    const code = (result: { error: Error | null }) => (result.error as { code?: string } | null)?.code;
    const poisoned = run(Buffer.from(padded('{"messages":[{"role":"user","content":[{"__proto__":{"x":1}}]}]}')));
    assert.deepEqual([poisoned.delegated, code(poisoned)], [true, 'FST_ERR_CTP_INVALID_JSON_BODY']);
    const invalid = run(Buffer.from(padded('{"a":[1,]}')));
    assert.ok(invalid.delegated && invalid.error !== null);
    const deep = run(Buffer.from(padded(`{"a":${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}}`)));
    assert.ok(deep.delegated);
    assert.match(String(deep.error?.message), /deeper than 128 levels/);
    const latin1 = Buffer.concat([Buffer.from(padded('{"a":"')), Buffer.from([0xe9]), Buffer.from('"}')]);
    const notUtf8 = run(latin1);
    assert.ok(notUtf8.delegated && notUtf8.error === null);
    assert.equal((notUtf8.value as { a: string }).a, '\ufffd', 'decoded as before, with a replacement character');
  });
});

describe('ParsedBlocks', () => {
  const bytesOf = (text: string) => Buffer.from(text);

  test('finds a block by its bytes wherever they sit, and keeps its own copy of them', () => {
    const blocks = new ParsedBlocks();
    const text = `"${long(2000)}"`;
    const body = bytesOf(`{"a":${text}}`);
    blocks.set(body, 5, 5 + text.length, 'value');
    assert.equal(blocks.get(bytesOf(`  ${text}`), 2, 2 + text.length), 'value');
    body.fill(0x20);
    assert.equal(blocks.get(bytesOf(text), 0, text.length), 'value', 'the request body changing changes nothing remembered');
  });

  test('a block with the same fingerprint but other bytes is a miss, never the other value', () => {
    const blocks = new ParsedBlocks();
    const a = bytesOf(long(2000, 'a'));
    const b = Buffer.from(a);
    b[1] = 0x62; // not one of the sampled bytes
    assert.equal(byteFingerprint(a, 0, a.length), byteFingerprint(b, 0, b.length));
    blocks.set(a, 0, a.length, 'a');
    assert.equal(blocks.get(b, 0, b.length), undefined);
    assert.equal(blocks.get(a, 0, a.length), 'a');
  });

  test('bounded by entries and by bytes, the least recently used going first', () => {
    const blocks = new ParsedBlocks(2, 10_000);
    const block = (c: string) => bytesOf(long(3000, c));
    blocks.set(block('a'), 0, 3000, 'a');
    blocks.set(block('b'), 0, 3000, 'b');
    assert.equal(blocks.get(block('a'), 0, 3000), 'a');
    blocks.set(block('c'), 0, 3000, 'c');
    assert.deepEqual(['a', 'b', 'c'].map((c) => blocks.get(block(c), 0, 3000)), ['a', undefined, 'c'], 'b was the least recently used');
    const bytes = new ParsedBlocks(100, 7_000);
    for (const c of 'abc') bytes.set(block(c), 0, 3000, c);
    assert.equal(bytes.size, 2, 'at most 7,000 bytes of keys');
    bytes.set(bytesOf(long(8000)), 0, 8000, 'too large');
    assert.equal(bytes.get(bytesOf(long(8000)), 0, 8000), undefined, 'a block larger than the whole memory is not kept');
  });
});
