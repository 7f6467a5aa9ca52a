// Cutting text into bounded segments for the tokenizer: exact wherever o200k splits anyway, and every
// piece short, so no run of one character can make the BPE quadratic.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { countTokens, encode } from 'gpt-tokenizer/encoding/o200k_base';
import { countSegment, isNaturalCut, MAX_RUN, nextCut, SEGMENT_CHARS } from '../../../src/tokens/bounded-count.js';
import { seededRng } from '../../support/seeded-random.js';

const PLAIN = { disallowedSpecial: new Set<string>() };
const tokensOf = (text: string) => encode(text, PLAIN);

/** Every segment nextCut makes of `text` (final). */
function segments(text: string): string[] {
  const out: string[] = [];
  for (let start = 0; start < text.length; ) {
    const end = nextCut(text, start, true);
    assert.ok(end > start, 'nextCut makes progress');
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}

/** The strings of the recorded upstream fixtures and of the OpenAI API description (descriptions, examples). */
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
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      try {
        collect(JSON.parse(line.startsWith('data: ') ? line.slice(6) : line));
      } catch {
        // not a JSON line (SSE framing, event names)
      }
    }
  }
  return texts;
}

describe('isNaturalCut', () => {
  test('cuts only where no o200k piece crosses: the parts encode to exactly the tokens of the whole', () => {
    // Characters that meet every rule: letters of both cases, digits, symbols, apostrophes and contractions,
    // spaces and line breaks of every kind, "/", non-ASCII letters, a combining mark, CJK, an emoji.
    const alphabet = ['a', 'b', 'Z', 'Q', '1', '2', '.', ',', "'", '"', '/', '_', '-', ' ', ' ', ' ', '\n', '\r', '\t', 'é', 'É', '中', '😀', '\u00a0', '\u0301', 's', 'll', "'s", '{', '}', '  ', '\n\n', '\r\n', '//'];
    const rng = seededRng(15);
    let cuts = 0;
    for (let n = 0; n < 4000; n++) {
      let text = '';
      for (let k = rng.int(1, 14); k > 0; k--) text += rng.pick(alphabet);
      const parts: string[] = [];
      let previous = 0;
      for (let i = 1; i < text.length; i++) {
        if (isNaturalCut(text, i) !== true) continue;
        parts.push(text.slice(previous, i));
        previous = i;
        cuts++;
      }
      parts.push(text.slice(previous));
      assert.deepEqual(parts.flatMap(tokensOf), tokensOf(text), `cut as ${JSON.stringify(parts)}`);
    }
    assert.ok(cuts > 3000, `the strings had natural cuts to check (${cuts})`);
  });

  test('leaves undecided what depends on text not yet there', () => {
    assert.equal(isNaturalCut('word ', 4), undefined, 'a space before the end: a word or more spaces may follow');
    assert.equal(isNaturalCut('word x', 4), true);
    assert.equal(isNaturalCut('line\n  ', 5), undefined, 'another line break may follow the indentation');
    assert.equal(isNaturalCut('line\n  x', 5), true);
    assert.equal(isNaturalCut('line\n  \nx', 5), false);
  });
});

describe('nextCut', () => {
  test('ends segments at natural cuts once they are SEGMENT_CHARS long, so ordinary text is counted exactly', () => {
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(500);
    const parts = segments(text);
    assert.ok(parts.length > 1);
    for (const part of parts.slice(0, -1)) assert.ok(part.length >= SEGMENT_CHARS && part.length < SEGMENT_CHARS + 10);
    assert.equal(parts.reduce((sum, part) => sum + countSegment(part), 0), countTokens(text));
  });

  test('cuts a run without natural cuts every MAX_RUN characters', () => {
    const parts = segments('a'.repeat(10 * MAX_RUN + 5));
    assert.deepEqual(
      parts.map((p) => p.length),
      [...Array<number>(10).fill(MAX_RUN), 5],
    );
    assert.ok(segments(' '.repeat(1000)).every((p) => p.length <= MAX_RUN));
  });

  test('never cuts between the two halves of a surrogate pair', () => {
    const emoji = '😀🎉'.repeat(500) + 'x😀'.repeat(300);
    for (const part of segments(emoji)) {
      assert.ok(part.length <= MAX_RUN + 1);
      assert.ok(!/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(part), 'whole code points only');
    }
  });

  test('without the end of the text, decides only cuts it can see past, and the same ones', () => {
    const text = 'Hello there, general Kenobi. '.repeat(200) + 'a'.repeat(300);
    const final = segments(text);
    // As a stream: each decided cut is one the whole text also has.
    const streamed: string[] = [];
    let start = 0;
    for (let end = nextCut(text, start, false); end >= 0; end = nextCut(text, start, false)) {
      streamed.push(text.slice(start, end));
      start = end;
    }
    assert.deepEqual(streamed, final.slice(0, streamed.length));
    assert.equal(nextCut('abc ', 0, false), -1);
  });
});

describe('countSegment', () => {
  test('counts every text of the recorded fixtures exactly as the tokenizer does', () => {
    const texts = fixtureTexts();
    assert.ok(texts.length > 5000, 'the fixtures were read');
    let differ = 0;
    for (const text of texts) {
      const bounded = segments(text).reduce((sum, part) => sum + countSegment(part), 0);
      if (bounded !== countTokens(text, PLAIN)) differ++;
    }
    assert.equal(differ, 0);
  });

  test('counts special-token text as the text it is, never refusing it', () => {
    assert.equal(countSegment('<|endoftext|>'), encode('<|endoftext|>', PLAIN).length);
    assert.ok(countSegment('say <|endoftext|> <|im_start|>') > 2);
  });
});
