// A JSON body's bytes read as text for JSON.parse, cheaply. Node's UTF-8 decoder makes a body with a single
// non-ASCII character a two-byte string: a 116 KB Claude Code body (212 of them) became 232 KB, past V8's
// largest ordinary object, so each one was a fresh mapping of pages — 250–330 µs of decoding, half of it in
// the kernel, on every request. Here each non-ASCII character is written as its JSON escape (\uXXXX, a
// pair for one beyond the BMP) into a buffer with the ASCII runs around it, and the buffer is read as
// Latin-1: the same JSON, one byte per character, in ~45 µs. Outside a string a non-ASCII character is
// invalid JSON either way. The text's offsets then differ from the bytes' where it escaped: `byteOffset`
// maps them back, so a native cell can still forward the bytes as they came with only `model` replaced.
import { Buffer } from 'node:buffer';

const HEX = '0123456789abcdef';

/** A body's bytes, and how the offsets of the text read from them map to theirs. */
export interface JsonBytes {
  readonly bytes: Buffer;
  /** The offset in `bytes` of the character at `at` in the text (or of its end, at its length). */
  byteOffset(at: number): number;
}

const same = (offset: number): number => offset;

/** `bytes` read as text one character per byte (Latin-1): the text's offsets are the bytes'. */
export const asRead = (bytes: Buffer): JsonBytes => ({ bytes, byteOffset: same });

/**
 * The index of the first byte ≥ 0x80 at or after `from`, or -1: four bytes at a time where aligned
 * (`words` views the same memory from `wordsFrom`).
 */
function nextNonAscii(bytes: Buffer, words: Uint32Array, wordsFrom: number, from: number): number {
  let i = from;
  while (i < bytes.length && (i < wordsFrom || (i - wordsFrom) % 4 !== 0)) {
    if (bytes[i]! >= 0x80) return i;
    i++;
  }
  for (let w = (i - wordsFrom) >>> 2; w < words.length; w++) {
    if ((words[w]! & 0x80808080) !== 0) {
      let j = wordsFrom + w * 4;
      while (bytes[j]! < 0x80) j++;
      return j;
    }
  }
  for (let j = Math.max(i, wordsFrom + words.length * 4); j < bytes.length; j++) if (bytes[j]! >= 0x80) return j;
  return -1;
}

/** A character at `at` (its UTF-8 sequence is `length` bytes): the code point. */
function codePoint(bytes: Buffer, at: number, length: number): number {
  const lead = bytes[at]!;
  if (length === 2) return ((lead & 0x1f) << 6) | (bytes[at + 1]! & 0x3f);
  if (length === 3) return ((lead & 0x0f) << 12) | ((bytes[at + 1]! & 0x3f) << 6) | (bytes[at + 2]! & 0x3f);
  return ((lead & 0x07) << 18) | ((bytes[at + 1]! & 0x3f) << 12) | ((bytes[at + 2]! & 0x3f) << 6) | (bytes[at + 3]! & 0x3f);
}

/** Writes `\uXXXX` for the UTF-16 unit `unit` into `out` at `to`; returns where it ends. */
function writeEscape(out: Uint8Array, to: number, unit: number): number {
  out[to] = 0x5c;
  out[to + 1] = 0x75;
  out[to + 2] = HEX.charCodeAt((unit >> 12) & 15);
  out[to + 3] = HEX.charCodeAt((unit >> 8) & 15);
  out[to + 4] = HEX.charCodeAt((unit >> 4) & 15);
  out[to + 5] = HEX.charCodeAt(unit & 15);
  return to + 6;
}

/**
 * `bytes` (valid UTF-8: the caller checked) as JSON text with every non-ASCII character escaped, and the
 * map back (which keeps nothing of the text: the bytes alone may outlive it). The escaped text is written
 * into a buffer first, so the only string made is the text itself.
 */
export function jsonBytes(bytes: Buffer): { readonly text: string; readonly read: JsonBytes } {
  const head = (4 - (bytes.byteOffset % 4)) % 4;
  const wordsFrom = Math.min(head, bytes.length);
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset + wordsFrom, (bytes.length - wordsFrom) >>> 2);
  let at = nextNonAscii(bytes, words, wordsFrom, 0);
  if (at === -1) return { text: bytes.toString('latin1'), read: { bytes, byteOffset: same } };
  // First pass: where each character to escape is, its length, and what its escape adds (cumulative).
  const starts: number[] = [];
  const lengths: number[] = [];
  const escapedAt: number[] = [];
  const added: number[] = [];
  let extra = 0;
  const most = Math.max(256, bytes.length >>> 5);
  while (at !== -1) {
    // Mostly non-ASCII text (a prompt in another script, random bytes): escaping would make the text up to
    // six times longer and the arrays above as long as the body — Node's decoder is the cheaper way there.
    if (starts.length > most) return decodedUtf8(bytes);
    const lead = bytes[at]!;
    const length = lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
    starts.push(at);
    lengths.push(length);
    escapedAt.push(at + extra);
    extra += (length === 4 ? 12 : 6) - length;
    added.push(extra);
    at = nextNonAscii(bytes, words, wordsFrom, at + length);
  }
  // Second pass: the ASCII runs copied, each character written as its escape (a surrogate pair past the BMP).
  const out = Buffer.allocUnsafe(bytes.length + extra);
  let from = 0;
  let to = 0;
  for (let i = 0; i < starts.length; i++) {
    const start = starts[i]!;
    out.set(bytes.subarray(from, start), to);
    to += start - from;
    const point = codePoint(bytes, start, lengths[i]!);
    if (point >= 0x10000) {
      to = writeEscape(out, to, 0xd800 | ((point - 0x10000) >> 10));
      to = writeEscape(out, to, 0xdc00 | ((point - 0x10000) & 0x3ff));
    } else {
      to = writeEscape(out, to, point);
    }
    from = start + lengths[i]!;
  }
  out.set(bytes.subarray(from), to);
  return { text: out.toString('latin1'), read: { bytes, byteOffset: offsetsAfter(escapedAt, added) } };
}

/**
 * `bytes` decoded as UTF-8 the ordinary way (a two-byte string when any character is non-ASCII), each
 * text offset mapped back by measuring the text before it: done for a few offsets only (the `model` span),
 * and this map keeps the text alive, which such a body's bytes would not need otherwise.
 */
function decodedUtf8(bytes: Buffer): { readonly text: string; readonly read: JsonBytes } {
  const text = bytes.toString('utf8');
  return { text, read: { bytes, byteOffset: (offset) => Buffer.byteLength(text.slice(0, offset), 'utf8') } };
}

/** The byte offsets of a text whose escapes start at `escapedAt`, each adding `added` characters so far. */
function offsetsAfter(escapedAt: readonly number[], added: readonly number[]): (offset: number) => number {
  return (offset) => {
    // The escapes that start before `offset` (binary search): each moved what follows it.
    let low = 0;
    let high = escapedAt.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (escapedAt[middle]! < offset) low = middle + 1;
      else high = middle;
    }
    return low === 0 ? offset : offset - added[low - 1]!;
  };
}
