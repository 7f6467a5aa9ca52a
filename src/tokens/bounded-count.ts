// The o200k_base count of text cut into bounded segments. The BPE costs time quadratic in the length of
// one pre-tokenizer piece (a run of letters, of emoji, of spaces...), so 100 KB of one character took
// seconds. Text is cut where the tokenizer splits anyway (exact), and a run with no such point is cut
// every MAX_RUN characters (a slight overcount): docs/adr/0013-bounded-token-counting.md.
import { countO200k } from './o200k-count.js';
import { o200kRanks } from './o200k-ranks.js';

/** Longest stretch without a natural cut: bounds the BPE's quadratic work per piece. */
export const MAX_RUN = 48;
/** Segments go to the tokenizer about this long (fewer calls; their pieces are still bounded by MAX_RUN). */
export const SEGMENT_CHARS = 2_048;
/** JavaScript's `\s`, which the o200k pre-tokenizer splits on. */
function isSpace(code: number): boolean {
  if (code < 0x80) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

// ASCII character classes, for the cuts o200k makes between two printable characters.
const OTHER = 0;
const LOWER = 1;
const UPPER = 2;
const DIGIT = 3;
/** Printable ASCII that is neither a letter nor a digit (the apostrophe apart: it starts "'s", "'ll"...). */
const PUNCT = 4;
const APOSTROPHE = 5;
const ASCII_CLASS = new Uint8Array(128);
for (let c = 0x21; c < 0x7f; c++) ASCII_CLASS[c] = PUNCT;
for (let c = 0x30; c <= 0x39; c++) ASCII_CLASS[c] = DIGIT;
for (let c = 0x41; c <= 0x5a; c++) ASCII_CLASS[c] = UPPER;
for (let c = 0x61; c <= 0x7a; c++) ASCII_CLASS[c] = LOWER;
ASCII_CLASS[0x27] = APOSTROPHE;

/**
 * Whether no o200k piece spans `before`|`after` (two non-space ASCII characters): a letter run ends
 * before a digit, a symbol or an upper-case letter; a digit run before anything else; a symbol run before
 * a digit. (A symbol before a letter is not a cut: o200k reads ".word" or "_word" as one piece.)
 */
function splitsBetween(before: number, after: number): boolean {
  const a = before < 0x80 ? ASCII_CLASS[before]! : OTHER;
  const b = after < 0x80 ? ASCII_CLASS[after]! : OTHER;
  switch (a) {
    case LOWER:
      return b === UPPER || b === DIGIT || b === PUNCT;
    case UPPER:
      return b === DIGIT || b === PUNCT;
    case DIGIT:
      return b === LOWER || b === UPPER || b === PUNCT || b === APOSTROPHE;
    case PUNCT:
    case APOSTROPHE:
      return b === DIGIT;
    default:
      return false;
  }
}

const isLineBreak = (code: number) => code === 0x0a || code === 0x0d;

/**
 * Whether no o200k piece crosses position i (0 < i < text.length), so the text can be counted in two parts
 * there without changing the total; undefined when that depends on text after the end (a stream).
 */
export function isNaturalCut(text: string, i: number): boolean | undefined {
  const code = text.charCodeAt(i);
  const before = text.charCodeAt(i - 1);
  if (code === 0x20 && !isSpace(before)) {
    // A space before a word or symbol starts its piece (" word", " {").
    return i + 1 < text.length ? !isSpace(text.charCodeAt(i + 1)) : undefined;
  }
  if (isLineBreak(before)) {
    // A line break ends its piece ("\n", "  \n", "}\n"), except before a "/" (o200k reads "}\n/" as one)
    // or when more line breaks follow in the same run of spaces (they all go into one piece).
    if (!isSpace(code)) return code !== 0x2f;
    for (let j = i; j < text.length && j - i < MAX_RUN; j++) {
      const next = text.charCodeAt(j);
      if (!isSpace(next)) return true;
      if (isLineBreak(next)) return false;
    }
    return i + MAX_RUN <= text.length ? false : undefined;
  }
  return splitsBetween(before, code);
}

// isNaturalCut for every pair of ASCII characters, so the scan below reads a table for ordinary text.
const NO = 0;
const YES = 1;
/** It depends on what follows: ask isNaturalCut. */
const LOOK = 2;
const ASCII_PAIRS = new Uint8Array(128 * 128);
for (let before = 0; before < 128; before++) {
  for (let code = 0; code < 128; code++) {
    const natural = isNaturalCut(String.fromCharCode(before, code), 1);
    ASCII_PAIRS[(before << 7) | code] = natural === undefined ? LOOK : natural ? YES : NO;
  }
}

/**
 * The end of the segment that starts at `start`, or -1 when `final` is false and the text so far does not
 * decide it (more may follow). A segment ends at a natural cut once it is SEGMENT_CHARS long, so counting
 * the segments apart is exact; a run of MAX_RUN characters without one is cut anyway (never between the
 * halves of a surrogate pair). Cuts depend only on the text from `start`: a text counted whole or as it
 * arrives is cut at the same places.
 */
export function nextCut(text: string, start: number, final: boolean): number {
  let lastNatural = start;
  let before = text.charCodeAt(start);
  for (let i = start + 1; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const pair = (before | code) < 0x80 ? ASCII_PAIRS[(before << 7) | code] : LOOK;
    let natural: boolean | undefined = pair === YES;
    if (pair === LOOK) {
      // A space after a non-space (isNaturalCut's first rule, the commonest case) is decided inline.
      if (code === 0x20 && !isSpace(before)) natural = i + 1 < text.length ? !isSpace(text.charCodeAt(i + 1)) : undefined;
      else natural = isNaturalCut(text, i);
    }
    before = code;
    if (natural === undefined && !final) return -1;
    if (natural) {
      if (i - start >= SEGMENT_CHARS) return i;
      lastNatural = i;
    } else if (i - lastNatural >= MAX_RUN && (code < 0xdc00 || code > 0xdfff)) {
      return i;
    }
  }
  return final ? text.length : -1;
}

/**
 * Reads the vocabulary now if it is not yet (once per process, ~60–100 ms): callers that time the count
 * (token-tally.ts) call this first, so the one-off load never eats a request's counting budget.
 */
export function loadTokenizer(): void {
  if (warm) return;
  warm = true;
  o200kRanks();
  // Every path of the counter run a few times on runs as long as a segment's pieces get, so the first
  // hostile prompt (CJK, emoji, random bytes) does not run cold, interpreted code: that blocked the event
  // loop for 200 ms once, against ~10 ms warm. A few milliseconds, once.
  for (let i = 0; i < 30; i++) countO200k(WARM_UP);
}

let warm = false;
const WARM_UP = [
  'The quick brown fox, 1234567 (jumps) over the lazy dog\'s back; {"json": [true, null]}\n\t  ',
  '中文字符的测试文本没有空格'.repeat(4).slice(0, MAX_RUN),
  '😀🎉👍🏽'.repeat(12).slice(0, MAX_RUN),
  '\uFFFDé\u00a0ß\u0301Ж'.repeat(10).slice(0, MAX_RUN),
  'x'.repeat(MAX_RUN),
].join(' ');

/** Tokens of one segment (as nextCut delimits them); special-token strings count as the text they are. */
export function countSegment(segment: string): number {
  return countO200k(segment);
}
