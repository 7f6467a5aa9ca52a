// The o200k_base vocabulary in about 5 MB: every token's bytes in one buffer, and an open-addressing hash
// table from bytes to rank in a typed array. gpt-tokenizer keeps the same 200k tokens as JavaScript strings
// in a Map and arrays, which cost the gateway ~65 MB of RSS (docs/adr/0024-tokenizer-memory.md). The data
// is read, once and lazily, from the tiktoken file gpt-tokenizer ships (the one OpenAI publishes).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Twice the next power of two above the 199,998 tokens: probe chains stay short. */
const TABLE_BITS = 19;
const TABLE_MASK = (1 << TABLE_BITS) - 1;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
/** Bits of a slot for rank + 1 (199,998 tokens); the token's length (at most 128 bytes) is above them. */
const RANK_BITS = 18;
const RANK_MASK = (1 << RANK_BITS) - 1;
const MAX_TOKEN_BYTES = 255;

export interface O200kRanks {
  /** Every token's bytes, rank after rank. */
  readonly bytes: Uint8Array;
  /** Token `rank` is bytes[offsets[rank] .. offsets[rank + 1]). */
  readonly offsets: Uint32Array;
  /**
   * Slot → (length << RANK_BITS) | (rank + 1), 0 when empty; slots are indexed by the FNV-1a hash of the
   * bytes. The length in the slot lets a probe skip other tokens without reading their bytes.
   */
  readonly table: Int32Array;
}

/** FNV-1a of bytes[start..end). */
export function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let h = FNV_OFFSET;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i]!, FNV_PRIME);
  return h >>> 0;
}

/** FNV-1a of the UTF-8 bytes of text[start..end), which must be ASCII (its char codes are its bytes). */
export function hashAscii(text: string, start: number, end: number): number {
  let h = FNV_OFFSET;
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return h >>> 0;
}

/** The rank of bytes[start..end) with hash `hash`, or -1 when they are not a token. */
export function rankOfBytes(ranks: O200kRanks, bytes: Uint8Array, start: number, end: number, hash: number): number {
  const { table, offsets, bytes: vocab } = ranks;
  const length = end - start;
  if (length > MAX_TOKEN_BYTES) return -1;
  for (let slot = hash & TABLE_MASK; ; slot = (slot + 1) & TABLE_MASK) {
    const entry = table[slot]!;
    if (entry === 0) return -1;
    if (entry >>> RANK_BITS !== length) continue;
    const rank = (entry & RANK_MASK) - 1;
    const from = offsets[rank]!;
    let i = 0;
    while (i < length && vocab[from + i] === bytes[start + i]) i++;
    if (i === length) return rank;
  }
}

/** The rank of the ASCII text[start..end) with hash `hash`, or -1. */
export function rankOfAscii(ranks: O200kRanks, text: string, start: number, end: number, hash: number): number {
  const { table, offsets, bytes: vocab } = ranks;
  const length = end - start;
  if (length > MAX_TOKEN_BYTES) return -1;
  for (let slot = hash & TABLE_MASK; ; slot = (slot + 1) & TABLE_MASK) {
    const entry = table[slot]!;
    if (entry === 0) return -1;
    if (entry >>> RANK_BITS !== length) continue;
    const rank = (entry & RANK_MASK) - 1;
    const from = offsets[rank]!;
    let i = 0;
    while (i < length && vocab[from + i] === text.charCodeAt(start + i)) i++;
    if (i === length) return rank;
  }
}

/** The tiktoken file of gpt-tokenizer (a pinned dependency): one "base64-of-bytes rank" line per token. */
function tiktokenPath(): string {
  const require = createRequire(import.meta.url);
  // The package's exports map every subpath to a module, so find its root from its main entry (cjs/main.js).
  return join(dirname(require.resolve('gpt-tokenizer')), '..', 'data', 'o200k_base.tiktoken');
}

const BASE64 = new Int8Array(256).fill(-1);
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) BASE64[c.charCodeAt(0)] = i;

/** Decodes file[from..to) (base64, padded) into out at `at`; returns the bytes written. */
function decodeBase64(file: Uint8Array, from: number, to: number, out: Uint8Array, at: number): number {
  let bits = 0;
  let buffered = 0;
  let written = 0;
  for (let i = from; i < to && file[i] !== 0x3d; i++) {
    const sextet = BASE64[file[i]!]!;
    if (sextet < 0) throw new Error('o200k ranks: bad base64');
    bits = (bits << 6) | sextet;
    buffered += 6;
    if (buffered >= 8) {
      buffered -= 8;
      out[at + written++] = (bits >>> buffered) & 0xff;
    }
  }
  return written;
}

/** Calls `line(start, space, end)` for each non-empty line of the file (space: start when it has none). */
function eachLine(file: Uint8Array, line: (start: number, space: number, end: number) => void): void {
  for (let i = 0; i < file.length; ) {
    let eol = file.indexOf(0x0a, i);
    if (eol < 0) eol = file.length;
    if (eol > i) {
      const space = file.indexOf(0x20, i);
      line(i, space >= 0 && space < eol ? space : i, eol);
    }
    i = eol + 1;
  }
}

/**
 * Parses a tiktoken file ("base64 rank" lines, ranks 0, 1, 2... in order) into the compact tables,
 * straight from its bytes in two passes (sizes, then contents): no string or array per token, so
 * loading leaves no garbage behind but the file's own buffer.
 */
export function parseTiktoken(file: Uint8Array): O200kRanks {
  let count = 0;
  let total = 0;
  eachLine(file, (start, space) => {
    count++;
    let padding = 0;
    while (padding < 2 && space - padding - 1 >= start && file[space - padding - 1] === 0x3d) padding++;
    total += Math.floor(((space - start) * 3) / 4) - padding;
  });
  if (count >= RANK_MASK) throw new Error('o200k ranks: too many tokens');
  const bytes = new Uint8Array(Math.max(total, 0));
  const offsets = new Uint32Array(count + 1);
  const table = new Int32Array(1 << TABLE_BITS);
  let rank = 0;
  let at = 0;
  eachLine(file, (start, space, end) => {
    let declared = space > start ? 0 : -1;
    let i = space + 1;
    for (; i < end && file[i]! >= 0x30 && file[i]! <= 0x39; i++) declared = declared * 10 + file[i]! - 0x30;
    if (declared !== rank || i === space + 1 || (i < end && !(i === end - 1 && file[i] === 0x0d))) {
      throw new Error(`o200k ranks: bad line ${rank + 1} (ranks must be 0, 1, 2... in order)`);
    }
    offsets[rank] = at;
    const length = decodeBase64(file, start, space, bytes, at);
    if (length === 0 || length > MAX_TOKEN_BYTES) throw new Error(`o200k ranks: token ${rank} does not fit a slot`);
    let slot = hashBytes(bytes, at, at + length) & TABLE_MASK;
    while (table[slot] !== 0) slot = (slot + 1) & TABLE_MASK;
    table[slot] = (length << RANK_BITS) | (rank + 1);
    at += length;
    rank++;
  });
  offsets[count] = at;
  if (at !== total) throw new Error('o200k ranks: bad base64 padding');
  return { bytes, offsets, table };
}

let loaded: O200kRanks | undefined;

/** The vocabulary, read on first use (~30 ms). */
export function o200kRanks(): O200kRanks {
  loaded ??= parseTiktoken(readFileSync(tiktokenPath()));
  return loaded;
}
