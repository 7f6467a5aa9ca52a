// Token counts of long texts that come back on every turn of an agent's session — Claude Code repeats a
// 26 KB system prompt, its tool definitions and the whole history on each request, Codex its 17 KB of
// instructions and its tools — remembered so that a turn counts only what is new. Every client API's input
// estimate uses the one process-wide memory (`rememberedCounts`). Bounded: least recently used entries go
// first, by count and by size.
//
// Keyed by content, but not by V8's string hash: a request's texts are new string objects, and hashing one
// reads every character (~1 ns each: ~100 µs for a Claude Code turn's 100 KB of repeated text). A
// fingerprint of the length and 64 sampled characters finds the entry; an equality check (a memory compare,
// ~10× faster than hashing) makes a hit certain. Texts with the same fingerprint take each other's place:
// a recount, never a wrong count.
import { BoundedMemory } from './bounded-memory.js';

/** Shorter texts are counted again: cheaper than remembering them. */
export const REMEMBERED_MIN_CHARS = 256;
const MAX_ENTRIES = 8_192;
/** The characters the remembered texts (the keys) may hold together: about 16 MB of memory. */
const MAX_CHARS = 8_000_000;
/** Characters sampled across a text for its fingerprint (plus its length and its last characters). */
const SAMPLES = 64;
const TAIL = 16;

interface Entry {
  readonly text: string;
  readonly count: number;
}

/** The length and SAMPLES characters spread over the text, and its last TAIL, mixed into 32 bits. */
export function fingerprint(text: string): number {
  const n = text.length;
  let h = Math.imul(n, 0x9e3779b1);
  const step = n > SAMPLES ? Math.floor(n / SAMPLES) : 1;
  for (let i = 0; i < n; i += step) h = Math.imul(h ^ text.charCodeAt(i), 0x85ebca6b) ^ (h >>> 13);
  for (let i = Math.max(0, n - TAIL); i < n; i++) h = Math.imul(h ^ text.charCodeAt(i), 0xc2b2ae35) ^ (h >>> 16);
  return h >>> 0;
}

/**
 * A copy of `text` that shares no memory with it: a key cut from a request's body (a slice) would
 * otherwise keep the whole body alive for as long as it is remembered.
 */
function ownCopy(text: string): string {
  return Buffer.from(text, 'utf16le').toString('utf16le');
}

export class BlockCounts {
  private readonly memory: BoundedMemory<Entry>;

  constructor(maxEntries = MAX_ENTRIES, maxChars = MAX_CHARS) {
    this.memory = new BoundedMemory(maxEntries, maxChars, (entry) => entry.text.length);
  }

  get size(): number {
    return this.memory.size;
  }

  /** The count remembered for exactly this text. */
  get(text: string): number | undefined {
    return this.memory.find(fingerprint(text), (entry) => entry.text === text)?.count;
  }

  set(text: string, count: number): void {
    const key = fingerprint(text);
    if (this.memory.peek(key)?.text === text) return;
    this.memory.put(key, { text: ownCopy(text), count });
  }
}

/** The counts every client API's input estimate shares, for this process. */
export const rememberedCounts = new BlockCounts();
