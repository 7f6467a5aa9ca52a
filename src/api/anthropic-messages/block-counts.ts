// Token counts of long texts that come back on every turn of an agent's session — Claude Code repeats a
// 26 KB system prompt, its tool definitions and the whole history on each request — remembered so that a
// turn counts only what is new. Bounded: least recently used entries go first, by count and by size.

/** Shorter texts are counted again: cheaper than remembering them. */
export const REMEMBERED_MIN_CHARS = 256;
const MAX_ENTRIES = 8_192;
/** The characters the remembered texts (the keys) may hold together: about 16 MB of memory. */
const MAX_CHARS = 8_000_000;

export class BlockCounts {
  private readonly counts = new Map<string, number>();
  private chars = 0;

  constructor(
    private readonly maxEntries = MAX_ENTRIES,
    private readonly maxChars = MAX_CHARS,
  ) {}

  get size(): number {
    return this.counts.size;
  }

  get(text: string): number | undefined {
    const count = this.counts.get(text);
    if (count !== undefined) {
      // Most recently used last.
      this.counts.delete(text);
      this.counts.set(text, count);
    }
    return count;
  }

  set(text: string, count: number): void {
    if (text.length > this.maxChars || this.counts.has(text)) return;
    this.counts.set(text, count);
    this.chars += text.length;
    for (const oldest of this.counts.keys()) {
      if (this.counts.size <= this.maxEntries && this.chars <= this.maxChars) break;
      this.counts.delete(oldest);
      this.chars -= oldest.length;
    }
  }
}
