// A running token count in bounded time and memory: exact for ordinary text however it arrives, an
// upward estimate past its time budget, and only a bounded tail of a stream kept.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { nextCut } from '../../../src/tokens/bounded-count.js';
import { MIN_TOKENS_PER_BYTE, TokenTally } from '../../../src/tokens/token-tally.js';
import { countText } from '../../../src/tokens/count-text.js';
import { seededRng } from '../../support/seeded-random.js';

const PLAIN = { disallowedSpecial: new Set<string>() };
const MB = 1024 * 1024;

/** About 40 KB of ordinary prose and code: more than one stream flush. */
const ORDINARY = [
  'The gateway holds an estimate before the call and settles the exact usage afterwards. ',
  'function settle(bill, usage) {\n  return bill.capture(price(usage));\n}\n',
  'Über 30 Millionen Menschen — 中文也可以 — 😀 and "quotes", [brackets] and {braces}: 1,234.56\n',
].join('').repeat(170);

function total(texts: string[], budgetMs = Infinity): number {
  const tally = new TokenTally(budgetMs);
  for (const text of texts) tally.add(text);
  return tally.total();
}

describe('TokenTally', () => {
  test('counts ordinary text as the tokenizer does', () => {
    assert.ok(ORDINARY.length > 32_768);
    assert.equal(total([ORDINARY]), countTokens(ORDINARY, PLAIN));
    assert.equal(countText(ORDINARY), countTokens(ORDINARY, PLAIN));
  });

  test('sums whole texts counted apart', () => {
    assert.equal(total(['Hello there', 'good night']), countTokens('Hello there') + countTokens('good night'));
  });

  test('counts a stream pushed in pieces of any size exactly as the same text whole', () => {
    const rng = seededRng(7);
    for (let round = 0; round < 5; round++) {
      const tally = new TokenTally(Infinity);
      for (let at = 0; at < ORDINARY.length; ) {
        const size = rng.chance(0.1) ? rng.int(1000, 40_000) : rng.int(1, 12);
        tally.push(ORDINARY.slice(at, at + size));
        at += size;
      }
      assert.equal(tally.total(), total([ORDINARY]), `round ${round}`);
    }
  });

  test('keeps only a bounded tail of an endless stream', () => {
    const piece = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(10);
    const tally = new TokenTally(Infinity);
    let most = 0;
    for (let i = 0; i < 2_000; i++) {
      tally.push(piece);
      most = Math.max(most, tally.pendingChars);
    }
    assert.ok(most < 40_000, `held back at most ${most} characters of ${2_000 * piece.length}`);
    assert.equal(tally.total(), total([piece.repeat(2_000)]));
  });

  test('with no budget left, estimates MIN_TOKENS_PER_BYTE of the UTF-8 size, rounded up', () => {
    assert.equal(total(['Hello world, this is ten+ bytes.'], 0), Math.ceil(32 * MIN_TOKENS_PER_BYTE));
    const stream = new TokenTally(0);
    stream.push('é'.repeat(10));
    assert.equal(stream.total(), Math.ceil(20 * MIN_TOKENS_PER_BYTE));
  });

  test('a pause while a short text is counted (GC, no CPU) does not spend the budget: the count stays exact', () => {
    // A clock that jumps 200 ms at every reading: each segment looks as if it took 200 ms.
    let now = 0;
    const pausing = new TokenTally(50, () => (now += 200));
    const texts = ['system', 'You are a terse assistant.', 'user', 'Count from one to five, in words, on one line.'];
    for (const text of texts) pausing.add(text);
    assert.equal(pausing.total(), texts.reduce((n, t) => n + countTokens(t, PLAIN), 0));
    // Long text still spends it: 2 KB segments are each charged up to ~40 ms, so a 50 ms budget ends.
    now = 0;
    const long = new TokenTally(50, () => (now += 200));
    const prose = 'The quick brown fox jumps over the lazy dog. '.repeat(2_000);
    long.add(prose);
    assert.ok(long.total() > countTokens(prose, PLAIN), 'estimated upward past the budget');
  });

  test('past its budget, extrapolates at the density it has seen plus 5%, or at the floor if that is more', () => {
    // A clock that advances 1 ms per reading: each segment costs 1 ms, so a 3 ms budget counts 3 exactly.
    const steppingClock = () => {
      let now = 0;
      return () => now++;
    };
    /** The rule, for ASCII text (a byte per character) whose first `exact` segments were counted. */
    const expected = (text: string, exact: number) => {
      let at = 0;
      let tokens = 0;
      for (let k = 0; k < exact; k++) {
        const end = nextCut(text, at, true);
        tokens += countTokens(text.slice(at, end), PLAIN);
        at = end;
      }
      return tokens + Math.ceil((text.length - at) * Math.max((tokens / at) * 1.05, MIN_TOKENS_PER_BYTE));
    };
    const digits = '1 2 3 4 5 6 7 8 9 '.repeat(2_000); // a token per byte: far denser than the floor
    const prose = 'The quick brown fox jumps over the lazy dog. '.repeat(2_000); // about 0.22 tokens per byte
    for (const text of [digits, prose]) {
      const tally = new TokenTally(3, steppingClock());
      tally.add(text);
      assert.equal(tally.total(), expected(text, 3));
      assert.ok(tally.total() >= countTokens(text, PLAIN), 'upward of the exact count');
    }
  });

  test('sizes megabytes of one letter, random bytes and emoji upward of the tokenizer, below their byte count', () => {
    const rng = seededRng(3);
    let emoji = '';
    while (emoji.length < MB) emoji += String.fromCodePoint(0x1f300 + rng.int(0, 0x34f));
    const random = randomBytes(MB).toString('utf8');
    // The tokenizer's own count, where it is quick: one letter is 8 per token; the others from a sample.
    const perByte = (text: string) => countTokens(text, PLAIN) / Buffer.byteLength(text);
    const cases = [
      { name: 'one letter', text: 'a'.repeat(MB), atLeast: MB / 8 },
      { name: 'random bytes', text: random, atLeast: 0.97 * perByte(random.slice(0, 8192)) * Buffer.byteLength(random) },
      { name: 'emoji', text: emoji, atLeast: 0.97 * perByte(emoji.slice(0, 8192)) * Buffer.byteLength(emoji) },
    ];
    for (const { name, text, atLeast } of cases) {
      const count = countText(text);
      assert.ok(count >= atLeast, `${name}: ${count} ≥ ${Math.round(atLeast)}`);
      assert.ok(count <= Buffer.byteLength(text), `${name}: ${count} ≤ its UTF-8 bytes`);
    }
  });

  test('counting cooperatively gives other work turns of the event loop, with the same result', async () => {
    const text = randomBytes(50_000).toString('latin1'); // a few hundred milliseconds of BPE
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const tally = new TokenTally(Infinity);
    await tally.addAll([text]);
    clearInterval(ticker);
    assert.ok(turns > 0, 'timers ran while counting');
    assert.equal(tally.total(), total([text]));
  });
});
