// The o200k_base token count of a text, exactly as gpt-tokenizer's countTokens gives it (special-token
// strings counted as plain text), on the compact vocabulary of o200k-ranks.ts. ASCII text is split into
// pre-tokenizer pieces by hand, following the o200k pattern's alternatives in order (about 5× faster
// than the regular expression); a piece that touches a non-ASCII character is matched by the pattern
// itself. A piece that is not one token goes through byte-pair merging (the same merge order as tiktoken).
// Identity with gpt-tokenizer is a property test (test/unit/tokens/o200k-count.test.ts).
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { hashAscii, hashBytes, o200kRanks, type O200kRanks, rankOfAscii, rankOfBytes } from './o200k-ranks.js';

/** The pattern, sticky: one piece at a given position. */
const PIECE = new RegExp(O200K_TOKEN_SPLIT_REGEX.source, 'uy');

// ASCII classes.
const OTHER = 0; // not a letter, digit or white space: punctuation, symbols, control characters
const LOWER = 1;
const UPPER = 2;
const DIGIT = 3;
const SPACE = 4; // \t \v \f and the space
const NEWLINE = 5; // \r \n
const CLASS = new Uint8Array(128);
for (let c = 0x61; c <= 0x7a; c++) CLASS[c] = LOWER;
for (let c = 0x41; c <= 0x5a; c++) CLASS[c] = UPPER;
for (let c = 0x30; c <= 0x39; c++) CLASS[c] = DIGIT;
for (const c of [0x09, 0x0b, 0x0c, 0x20]) CLASS[c] = SPACE;
CLASS[0x0a] = NEWLINE;
CLASS[0x0d] = NEWLINE;

/** Returned by asciiPiece when the piece depends on a non-ASCII character: ask the pattern. */
const ASK_PATTERN = -1;

/**
 * The class of text[i]; -1 for a non-ASCII character or past the end. Nothing here reads past the end
 * of the text: a charCodeAt out of bounds (NaN) sends V8's optimized code down a slower path (~15 %).
 */
const classAt = (text: string, i: number): number => {
  if (i >= text.length) return -1;
  const c = text.charCodeAt(i);
  return c < 0x80 ? CLASS[c]! : -1;
};

/** After a letter run: the optional contraction ('s 'd 'm 't 'll 've 're, any case). */
function contractionEnd(text: string, i: number): number {
  if (i + 1 >= text.length || text.charCodeAt(i) !== 0x27) return i;
  const a = text.charCodeAt(i + 1) | 0x20;
  if (a === 0x73 || a === 0x64 || a === 0x6d || a === 0x74) return i + 2;
  if (i + 2 >= text.length) return i;
  const b = text.charCodeAt(i + 2) | 0x20;
  if ((a === 0x6c && b === 0x6c) || (a === 0x76 && b === 0x65) || (a === 0x72 && b === 0x65)) return i + 3;
  return i;
}

/** Upper-case letters then lower-case ones from i (at least one letter there), then a contraction. */
function letterRunEnd(text: string, i: number): number {
  let k = classAt(text, i);
  while (k === UPPER) k = classAt(text, ++i);
  while (k === LOWER) k = classAt(text, ++i);
  if (k === -1 && i < text.length) return ASK_PATTERN; // a non-ASCII letter or mark may continue it
  return contractionEnd(text, i);
}

/**
 * The end of the o200k piece that starts at `start`, for ASCII text, or ASK_PATTERN. The pattern's
 * alternatives, in order: [prefix]letters[contraction] | \p{N}{1,3} | ' '?symbols[\r\n/]* |
 * \s*[\r\n]+ | \s+(?!\S) | \s+.
 */
function asciiPiece(text: string, start: number): number {
  const k = classAt(text, start);
  if (k === LOWER || k === UPPER) return letterRunEnd(text, start);
  const next = start + 1 < text.length ? classAt(text, start + 1) : NEWLINE; // NEWLINE: "nothing that matters"
  if (k === -1 || next === -1) return ASK_PATTERN;
  // Anything but \r, \n, a letter or a digit may prefix a word (" word", ".word", "\tword").
  if ((k === OTHER || k === SPACE) && (next === LOWER || next === UPPER)) return letterRunEnd(text, start + 1);
  if (k === DIGIT) {
    let i = start + 1;
    while (i < text.length && i - start < 3) {
      const c = classAt(text, i);
      if (c === -1) return ASK_PATTERN; // another script's digit would join the group
      if (c !== DIGIT) break;
      i++;
    }
    return i;
  }
  if (k === OTHER || (text.charCodeAt(start) === 0x20 && next === OTHER)) {
    let i = k === OTHER ? start + 1 : start + 2;
    let c = classAt(text, i);
    while (c === OTHER) c = classAt(text, ++i);
    if (c === -1 && i < text.length) return ASK_PATTERN; // non-ASCII symbols would join the run
    for (; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code !== 0x0a && code !== 0x0d && code !== 0x2f) break;
    }
    return i;
  }
  // White space: the run, and where its last line break is.
  let end = start;
  let lastBreak = -1;
  for (; end < text.length; end++) {
    const c = classAt(text, end);
    if (c === NEWLINE) lastBreak = end;
    else if (c !== SPACE) {
      if (c === -1) return ASK_PATTERN;
      break;
    }
  }
  if (lastBreak >= 0) return lastBreak + 1; // \s*[\r\n]+
  if (end === text.length) return end; // \s+(?!\S) at the end
  return end - start >= 2 ? end - 1 : end; // \s+(?!\S) leaves the last one to prefix what follows; else \s+
}

// Scratch space for byte-pair merging (pieces are bounded by the caller; it grows if one is not).
let scratch = new Uint8Array(1024);
let starts = new Int32Array(1025);
let pairRanks = new Int32Array(1025);
const encoder = new TextEncoder();
const NOT_A_TOKEN = 0x7fffffff;

function pairRank(ranks: O200kRanks, from: number, to: number): number {
  const rank = rankOfBytes(ranks, scratch, from, to, hashBytes(scratch, from, to));
  return rank < 0 ? NOT_A_TOKEN : rank;
}

/** Tokens of the `length` bytes in `scratch` by byte-pair merging: the lowest-ranked adjacent pair first. */
function mergeCount(ranks: O200kRanks, length: number): number {
  if (length <= 1) return length;
  if (starts.length <= length) {
    starts = new Int32Array(length + 1);
    pairRanks = new Int32Array(length + 1);
  }
  // parts: starts[0..parts]; pairRanks[i] = rank of the bytes from starts[i] to starts[i + 2].
  let parts = length;
  for (let i = 0; i <= length; i++) starts[i] = i;
  for (let i = 0; i < length - 1; i++) pairRanks[i] = pairRank(ranks, i, i + 2);
  pairRanks[length - 1] = NOT_A_TOKEN;
  while (parts > 1) {
    let lowest = NOT_A_TOKEN;
    let at = -1;
    for (let i = 0; i < parts - 1; i++) {
      if (pairRanks[i]! < lowest) {
        lowest = pairRanks[i]!;
        at = i;
      }
    }
    if (at < 0) break;
    // Merge parts `at` and `at + 1`: drop the boundary starts[at + 1].
    starts.copyWithin(at + 1, at + 2, parts + 1);
    pairRanks.copyWithin(at, at + 1, parts);
    parts--;
    pairRanks[at] = at + 2 <= parts ? pairRank(ranks, starts[at]!, starts[at + 2]!) : NOT_A_TOKEN;
    if (at > 0) pairRanks[at - 1] = pairRank(ranks, starts[at - 1]!, starts[at + 1]!);
  }
  return parts;
}

/** Pieces that are not one token, with their counts (most text repeats them); cleared when full. */
const mergedPieces = new Map<string, number>();
const MERGED_PIECES_MAX = 8_192;

function countMerged(ranks: O200kRanks, piece: string): number {
  const cached = mergedPieces.get(piece);
  if (cached !== undefined) return cached;
  if (scratch.length < piece.length * 3) scratch = new Uint8Array(piece.length * 3);
  const { written } = encoder.encodeInto(piece, scratch);
  const count = rankOfBytes(ranks, scratch, 0, written, hashBytes(scratch, 0, written)) >= 0 ? 1 : mergeCount(ranks, written);
  if (mergedPieces.size >= MERGED_PIECES_MAX) mergedPieces.clear();
  mergedPieces.set(piece, count);
  return count;
}

// A small direct-mapped cache of recent short ASCII pieces and their counts, in typed arrays that stay
// in the CPU cache (~200 KB): most pieces of real text repeat (" the", ",", "\n", "  "), and a hit here
// costs less than a probe of the 5 MB vocabulary or a merge.
const HOT_SLOTS = 8_192;
const HOT_CHARS = 12;
const hotText = new Uint8Array(HOT_SLOTS * HOT_CHARS);
const hotLength = new Uint8Array(HOT_SLOTS); // 0: empty
const hotCount = new Uint8Array(HOT_SLOTS);

function countAscii(ranks: O200kRanks, text: string, start: number, end: number): number {
  const length = end - start;
  const hash = hashAscii(text, start, end);
  const slot = hash & (HOT_SLOTS - 1);
  const base = slot * HOT_CHARS;
  if (hotLength[slot] === length) {
    let i = 0;
    while (i < length && hotText[base + i] === text.charCodeAt(start + i)) i++;
    if (i === length) return hotCount[slot]!;
  }
  const count = rankOfAscii(ranks, text, start, end, hash) >= 0 ? 1 : countMerged(ranks, text.slice(start, end));
  if (length <= HOT_CHARS && count < 256) {
    for (let i = 0; i < length; i++) hotText[base + i] = text.charCodeAt(start + i);
    hotLength[slot] = length;
    hotCount[slot] = count;
  }
  return count;
}

/** The o200k_base token count of `text` (gpt-tokenizer's countTokens with no special tokens). */
export function countO200k(text: string): number {
  const ranks = o200kRanks();
  let tokens = 0;
  for (let at = 0; at < text.length; ) {
    let end = asciiPiece(text, at);
    if (end === ASK_PATTERN) {
      PIECE.lastIndex = at;
      const match = PIECE.exec(text)!;
      end = at + match[0].length;
      tokens += countMerged(ranks, match[0]);
    } else {
      tokens += countAscii(ranks, text, at, end);
    }
    at = end;
  }
  return tokens;
}
