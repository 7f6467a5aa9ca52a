// A client body's bytes read as JSON text with non-ASCII characters escaped (src/http/json-bytes.ts): the
// text parses to exactly what the UTF-8 decoding would, and its offsets map back to the bytes, so a value
// found in the text can be cut from (or replaced in) the bytes as the client sent them.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { jsonBytes } from '../../../src/http/json-bytes.js';
import { topLevelMembers } from '../../../src/api/json-layout.js';
import { seededRng } from '../../support/seeded-random.js';

const PIECES = ['a', 'model', ' ', '"', '\\', '\n', 'é', 'ß', '—', '→', '日本', '\u{1F600}', '\u{10FFFF}', '\u00a0', '\u0080', '\u07ff', '\u0800', '\uffff'];

describe('jsonBytes', () => {
  test('an ASCII body is its own text, offsets unchanged', () => {
    const bytes = Buffer.from('{"model":"m","messages":[]}');
    const { text, read } = jsonBytes(bytes);
    assert.equal(text, bytes.toString('utf8'));
    assert.equal(read.byteOffset(10), 10);
    assert.equal(read.bytes, bytes);
  });

  test('escapes every non-ASCII character (pairs beyond the BMP), one byte per character, same JSON', () => {
    const source = JSON.stringify({ text: 'café — 日本 \u{1F600}', model: 'm' });
    const { text } = jsonBytes(Buffer.from(source));
    assert.equal(text, '{"text":"caf\\u00e9 \\u2014 \\u65e5\\u672c \\ud83d\\ude00","model":"m"}');
    assert.deepEqual(JSON.parse(text), JSON.parse(source));
  });

  test('on random bodies at every alignment: the same parse, and each member cut from the bytes by its mapped offsets', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const rng = seededRng(seed);
      const word = () => Array.from({ length: rng.int(0, 12) }, () => PIECES[rng.int(0, PIECES.length - 1)]).join('');
      const body: Record<string, unknown> = {};
      for (let i = 0; i < rng.int(1, 6); i++) body[`${word()}k${i}`] = rng.int(0, 2) === 0 ? word() : [word(), { x: word() }, rng.int(0, 1000)];
      const encoded = Buffer.from(JSON.stringify(body, null, rng.int(0, 2) === 0 ? undefined : 1));
      // A view at an odd offset inside a larger buffer, as a socket's may be.
      const shift = rng.int(0, 7);
      const bytes = Buffer.concat([Buffer.alloc(shift), encoded]).subarray(shift);
      const { text, read } = jsonBytes(bytes);
      assert.deepEqual(JSON.parse(text), body, `seed ${seed}`);
      for (const member of topLevelMembers(text)!) {
        const cut = bytes.subarray(read.byteOffset(member.value.start), read.byteOffset(member.value.end)).toString('utf8');
        assert.deepEqual(JSON.parse(cut), body[member.key], `seed ${seed}, ${member.key}`);
      }
      assert.equal(read.byteOffset(text.length), bytes.length, `seed ${seed}: the end maps to the end`);
    }
  });

  test('a body mostly of non-ASCII text is decoded the ordinary way (no escapes), its offsets still mapped to the bytes', () => {
    const prose = '日本語のテキスト — ' .repeat(20_000);
    const bytes = Buffer.from(JSON.stringify({ model: 'm', text: prose, tail: 'é' }));
    const { text, read } = jsonBytes(bytes);
    assert.equal(text, bytes.toString('utf8'), 'the UTF-8 decoding itself');
    for (const member of topLevelMembers(text)!) {
      const cut = bytes.subarray(read.byteOffset(member.value.start), read.byteOffset(member.value.end)).toString('utf8');
      assert.equal(cut, text.slice(member.value.start, member.value.end), member.key);
    }
    assert.equal(read.byteOffset(text.length), bytes.length);
  });

  test('the recorded agent bodies read the same as their UTF-8 decoding', () => {
    for (const name of ['claude-code-2.1.197-turn1.json', 'claude-code-2.1.197-turn2.json', 'codex-0.171.0-turn1.json', 'codex-0.171.0-turn2.json']) {
      const bytes = readFileSync(new URL(`../../fixtures/agents/${name}`, import.meta.url));
      assert.deepEqual(JSON.parse(jsonBytes(bytes).text), JSON.parse(bytes.toString('utf8')), name);
    }
  });
});
