// The compact o200k counter gives exactly gpt-tokenizer's counts (byte-order marks apart: it follows
// tiktoken there): the same vocabulary, the same pieces (its hand-written ASCII split included), the same
// merges — on random strings built to hit every branch of the pre-tokenizer, on real prose, code and
// JSON, and on every string of the recorded fixtures.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import gptRanks from 'gpt-tokenizer/bpeRanks/o200k_base';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { countO200k } from '../../../src/tokens/o200k-count.js';
import { hashBytes, o200kRanks, parseTiktoken, rankOfBytes } from '../../../src/tokens/o200k-ranks.js';
import { seededRng } from '../../support/seeded-random.js';

const PLAIN = { disallowedSpecial: new Set<string>() };
const reference = (text: string) => countTokens(text, PLAIN);

function fixtureTexts(): string[] {
  const texts: string[] = [];
  const collect = (value: unknown): void => {
    if (typeof value === 'string') texts.push(value);
    else if (Array.isArray(value)) value.forEach(collect);
    else if (value && typeof value === 'object') Object.values(value).forEach(collect);
  };
  collect(JSON.parse(readFileSync('test/fixtures/openai-openapi.json', 'utf8')));
  const walk = (dir: string): string[] => readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? walk(join(dir, name)) : [join(dir, name)]));
  for (const file of walk('test/fixtures/upstream')) {
    const body = readFileSync(file, 'utf8');
    texts.push(body);
    for (const line of body.split('\n')) {
      try {
        collect(JSON.parse(line.startsWith('data: ') ? line.slice(6) : line));
      } catch {
        // not a JSON line
      }
    }
  }
  return texts;
}

/** Counts that differ, with the first few texts for the failure message. */
function mismatches(texts: Iterable<string>): { count: number; checked: number; samples: string[] } {
  const samples: string[] = [];
  let count = 0;
  let checked = 0;
  for (const text of texts) {
    checked++;
    if (countO200k(text) === reference(text)) continue;
    count++;
    if (samples.length < 5) samples.push(JSON.stringify(text.slice(0, 120)));
  }
  return { count, checked, samples };
}

describe('o200k ranks', () => {
  test('hold every token of gpt-tokenizer, at its rank, byte for byte', () => {
    const ranks = o200kRanks();
    assert.equal(ranks.offsets.length - 1, gptRanks.length);
    const encoder = new TextEncoder();
    let asBytes = 0;
    gptRanks.forEach((token, rank) => {
      // gpt-tokenizer keeps a token as a string when its bytes are whole UTF-8, else as its bytes.
      const bytes = typeof token === 'string' ? encoder.encode(token) : Uint8Array.from(token);
      if (typeof token !== 'string') {
        asBytes++;
        // Kept as bytes: not valid UTF-8, or (9 tokens) starting with a byte-order mark, which its decoder
        // strips — see the byte-order-mark test below.
        const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
        if (!bom) assert.throws(() => new TextDecoder('utf-8', { fatal: true }).decode(bytes), `token ${rank} is valid UTF-8`);
      }
      assert.deepEqual(ranks.bytes.subarray(ranks.offsets[rank], ranks.offsets[rank + 1]), bytes, `token ${rank}`);
      assert.equal(rankOfBytes(ranks, bytes, 0, bytes.length, hashBytes(bytes, 0, bytes.length)), rank, `token ${rank}`);
    });
    assert.ok(asBytes > 0);
  });

  test('reject a file that does not describe ranks 0..n-1', () => {
    const parse = (text: string) => parseTiktoken(Buffer.from(text));
    assert.throws(() => parse('YQ== 0\nYg== 0\n'), /bad line 2/);
    assert.throws(() => parse('YQ== 1\n'), /bad line 1/);
    assert.throws(() => parse('YQ== 0x\n'), /bad line 1/);
    assert.throws(() => parse('YQ==\nYg== 1\n'), /bad line 1/);
    assert.throws(() => parse('Y!== 0\n'), /bad base64/);
    const small = parse('YQ== 0\nYg== 1\nYWI= 2');
    const ab = new Uint8Array([0x61, 0x62]);
    assert.equal(rankOfBytes(small, ab, 0, 2, hashBytes(ab, 0, 2)), 2);
    assert.equal(rankOfBytes(small, ab, 1, 2, hashBytes(ab, 1, 2)), 1);
    assert.equal(rankOfBytes(small, new Uint8Array([0x63]), 0, 1, hashBytes(new Uint8Array([0x63]), 0, 1)), -1);
  });
});

describe('countO200k', () => {
  test('counts random strings over every class the pre-tokenizer distinguishes exactly as gpt-tokenizer', () => {
    // ASCII letters of both cases and contractions, digits, symbols, each kind of white space and line
    // break, "/", and the non-ASCII cases that send a piece to the pattern: letters, marks, other
    // scripts' digits and spaces, CJK, emoji, a lone surrogate, title case, special-token text.
    const alphabet = ['a', 'b', 'Z', 'Q', 'xy', 'Hello', 'WORLD', ' ', '  ', '\n', '\r\n', '\r', '\t', '\v', '\f', '.', ',', '/', '//', "'", "'s", "'S", "'ll", "'LL", "'ve", "'re", "'d", "'m", "'t", "'x", '1', '23', '456', '7890', '_', '{', '}', '"', ':', '(', '\x00', '\x7f', 'é', 'É', '日本', '😀', '\u00a0', '\u2003', '\u3000', '٣', '\u0301', '\ud800', '\udc00', 'ß', 'ǅ', 'ʰ', '<|endoftext|>', '<|im_start|>', '—', '“'];
    const rng = seededRng(24);
    const texts: string[] = [];
    for (let n = 0; n < 30_000; n++) {
      let text = '';
      for (let k = rng.int(1, 24); k > 0; k--) text += rng.pick(alphabet);
      texts.push(text);
    }
    const result = mismatches(texts);
    assert.equal(result.count, 0, result.samples.join('\n'));
  });

  test('counts every string of the recorded fixtures and the OpenAI API description exactly', () => {
    const texts = fixtureTexts();
    assert.ok(texts.length > 5000, 'the fixtures were read');
    const result = mismatches(texts);
    assert.equal(result.count, 0, result.samples.join('\n'));
  });

  test('counts prose, code and JSON of every length exactly', () => {
    const corpus = [
      readFileSync('README.md', 'utf8'),
      readFileSync('src/tokens/bounded-count.ts', 'utf8'),
      readFileSync('test/fixtures/openai-openapi.json', 'utf8').slice(0, 300_000),
    ];
    const rng = seededRng(7);
    const texts: string[] = [];
    for (const text of corpus) {
      for (let n = 0; n < 300; n++) {
        const start = rng.int(0, text.length - 1);
        texts.push(text.slice(start, start + rng.int(1, 5_000)));
      }
    }
    const result = mismatches(texts);
    assert.equal(result.checked, 900);
    assert.equal(result.count, 0, result.samples.join('\n'));
  });

  test('counts a byte-order mark as o200k does (1 token), where gpt-tokenizer strips it in lookups and counts 2', () => {
    // o200k has "\uFEFF" (5574), "\uFEFFusing" (9251), "\uFEFF\n" (61992)...; gpt-tokenizer decodes byte
    // pairs with a TextDecoder that drops a leading BOM, so it never finds them. Everywhere else the counts
    // are identical (above); here the gateway follows tiktoken, as the upstream bills.
    assert.equal(countO200k('\uFEFF'), 1);
    assert.equal(countO200k('\uFEFFusing'), 1);
    assert.equal(countO200k('\uFEFF\n'), 1);
    assert.equal(countO200k('x\uFEFFnamespace'), 2);
    assert.equal(reference('\uFEFF'), 2);
  });

  test('counts long runs (the bounded-count edge cases) exactly', () => {
    const texts = ['a'.repeat(49), 'a'.repeat(2_000), ' '.repeat(300), '\n'.repeat(100) + 'x', '1'.repeat(1_000), '😀'.repeat(100), '.'.repeat(500), 'ab'.repeat(700), 'Ab1.'.repeat(400), ' \n'.repeat(200), '中文'.repeat(300), ''];
    const result = mismatches(texts);
    assert.equal(result.count, 0, result.samples.join('\n'));
    assert.equal(countO200k(''), 0);
  });
});
