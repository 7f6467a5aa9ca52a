// The one bounded memory behind what Tollgate remembers across requests by content (tokens/block-counts.ts:
// texts' token counts; api/parsed-blocks.ts: parsed JSON blocks): entries found by a 32-bit fingerprint and
// confirmed by the caller's own equality check (a fingerprint shared by two contents is a miss, never the
// other's entry), bounded by their number and by a size the caller measures, least recently used out first
// (a Map keeps insertion order: a hit is moved to the end).
export class BoundedMemory<Entry> {
  private readonly entries = new Map<number, Entry>();
  private held = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxSize: number,
    private readonly sizeOf: (entry: Entry) => number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The entry under `fingerprint` when `matches` says it is the one sought; a hit becomes the most recently used. */
  find(fingerprint: number, matches: (entry: Entry) => boolean): Entry | undefined {
    const entry = this.entries.get(fingerprint);
    if (entry === undefined || !matches(entry)) return undefined;
    this.entries.delete(fingerprint);
    this.entries.set(fingerprint, entry);
    return entry;
  }

  /** The entry under `fingerprint`, whatever it holds (to tell a repeat from a collision), without touching its place. */
  peek(fingerprint: number): Entry | undefined {
    return this.entries.get(fingerprint);
  }

  /** Keeps `entry` under `fingerprint` (in place of what was there), then drops the oldest past either bound. */
  put(fingerprint: number, entry: Entry): void {
    const size = this.sizeOf(entry);
    if (size > this.maxSize) return;
    const old = this.entries.get(fingerprint);
    if (old !== undefined) {
      this.entries.delete(fingerprint);
      this.held -= this.sizeOf(old);
    }
    this.entries.set(fingerprint, entry);
    this.held += size;
    for (const [oldest, dropped] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.held <= this.maxSize) break;
      this.entries.delete(oldest);
      this.held -= this.sizeOf(dropped);
    }
  }
}
