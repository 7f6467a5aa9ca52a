// Parsed values of the large blocks a coding agent sends again on every turn — Claude Code's 24 tool
// definitions (80 KB) and system blocks (27 KB), Codex's instructions and tools, and each turn's whole
// history — remembered by their bytes, so that a turn parses only what is new (docs/adr/0053). One
// process-wide memory, bounded by entries and by bytes, least recently used first out.
//
// Found by a fingerprint of the length and sampled bytes, made certain by comparing the bytes (a memory
// compare: a few microseconds for 100 KB). Two blocks with one fingerprint take each other's place: a
// parse again, never a wrong value. A remembered value is shared by every request that sends those bytes,
// so it is frozen, all the way down: code that changed a client's body in place would throw, not leak one
// request's change into another's body.
import { Buffer } from 'node:buffer';
import { BoundedMemory } from '../tokens/bounded-memory.js';

/** Smaller blocks are parsed again: cheaper than remembering them. */
export const REMEMBERED_MIN_BYTES = 1_024;
const MAX_ENTRIES = 4_096;
/** The bytes the remembered blocks' keys may hold together (their parsed values take about three times as much). */
const MAX_BYTES = 4_000_000;
const SAMPLES = 64;
const TAIL = 16;

interface Entry {
  readonly bytes: Buffer;
  readonly value: unknown;
}

/** The length and SAMPLES bytes spread over `bytes[start, end)`, and its last TAIL, mixed into 32 bits. */
export function byteFingerprint(bytes: Uint8Array, start: number, end: number): number {
  const n = end - start;
  let h = Math.imul(n, 0x9e3779b1);
  const step = n > SAMPLES ? Math.floor(n / SAMPLES) : 1;
  for (let i = start; i < end; i += step) h = Math.imul(h ^ bytes[i]!, 0x85ebca6b) ^ (h >>> 13);
  for (let i = Math.max(start, end - TAIL); i < end; i++) h = Math.imul(h ^ bytes[i]!, 0xc2b2ae35) ^ (h >>> 16);
  return h >>> 0;
}

/** `value` and everything in it frozen; returns `value`. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  for (const item of Object.values(value)) deepFreeze(item);
  return Object.freeze(value);
}

export class ParsedBlocks {
  private readonly memory: BoundedMemory<Entry>;

  constructor(
    maxEntries = MAX_ENTRIES,
    private readonly maxBytes = MAX_BYTES,
  ) {
    this.memory = new BoundedMemory(maxEntries, maxBytes, (entry) => entry.bytes.length);
  }

  get size(): number {
    return this.memory.size;
  }

  /** The value remembered for exactly the bytes `bytes[start, end)`, else undefined. */
  get(bytes: Buffer, start: number, end: number): unknown {
    const sought = (entry: Entry) => entry.bytes.length === end - start && bytes.compare(entry.bytes, 0, entry.bytes.length, start, end) === 0;
    return this.memory.find(byteFingerprint(bytes, start, end), sought)?.value;
  }

  /** Remembers `value`, parsed from `bytes[start, end)`, and returns it frozen (see above). */
  set<T>(bytes: Buffer, start: number, end: number, value: T): T {
    if (end - start > this.maxBytes) return value;
    // A copy: a view would keep the whole request body alive for as long as the block is remembered.
    this.memory.put(byteFingerprint(bytes, start, end), { bytes: ownCopy(bytes, start, end), value: deepFreeze(value) });
    return value;
  }
}

function ownCopy(bytes: Buffer, start: number, end: number): Buffer {
  const copy = Buffer.allocUnsafeSlow(end - start);
  bytes.copy(copy, 0, start, end);
  return copy;
}

/** The blocks every client API's body parser shares, for this process. */
export const rememberedBlocks = new ParsedBlocks();
