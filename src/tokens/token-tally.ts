// A running token count in bounded time and memory. Text is counted exactly (bounded-count.ts) until the
// tally's time budget is spent — ordinary text stays far inside it — and the rest is estimated upward
// from its UTF-8 size. A stream keeps only an unfinished tail, never the whole text.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { countSegment, loadTokenizer, nextCut } from './bounded-count.js';

/**
 * Exact counting per tally (one request's input, one response's output): far more than ordinary text
 * needs (a few hundred KB of English prose), and a bound on what hostile text can cost.
 */
export const COUNT_BUDGET_MS = 50;
/**
 * Past the budget, never fewer tokens per UTF-8 byte than this: English prose, code, JSON, Chinese and
 * Japanese all measured 0.25–0.28 (docs/adr/0013-bounded-token-counting.md).
 */
export const MIN_TOKENS_PER_BYTE = 0.3;
/** Denser text seen so far (digits, symbols, random bytes) is extrapolated at its own ratio plus this margin. */
const RATIO_MARGIN = 1.05;
/** A stream's text is counted once this much of it waits: the memory one stream's meter holds (≤ 64 KB). */
const FLUSH_CHARS = 32_768;
/** Work between two turns of the event loop when counting cooperatively. */
const SLICE_MS = 5;
/** Text past the budget is measured this many characters at a time (about a millisecond). */
const SIZE_SLICE_CHARS = 262_144;
/**
 * The most a segment is charged against the budget: this much per segment plus per character, several
 * times what any text costs (hostile text ~1–4 µs a character, ordinary text 0.1–0.2, more on a busy
 * machine). A longer wait while a short segment was counted is a garbage-collection pause or the process
 * waiting for a CPU, not the text's cost, and must not turn the exact count of a short prompt into an
 * estimate; long hostile segments are still charged their real time (docs/adr/0024-tokenizer-memory.md).
 */
const MAX_MS_PER_SEGMENT = 0.05;
const MAX_MS_PER_CHAR = 0.02;

export class TokenTally {
  private exactTokens = 0;
  private exactBytes = 0;
  /** UTF-8 bytes the budget did not cover. */
  private overBudgetBytes = 0;
  private spentMs = 0;
  /** Stream text after the last decided cut. */
  private tail = '';

  /** `budgetMs` of exact counting (by `clock`), after which text is estimated. */
  constructor(
    private readonly budgetMs: number,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** Every text so far was counted exactly (none was past the time budget). */
  get exact(): boolean {
    return this.overBudgetBytes === 0;
  }

  /** Stream text held back, not yet counted: at most about FLUSH_CHARS plus the last piece pushed. */
  get pendingChars(): number {
    return this.tail.length;
  }

  /** The tokens so far: exact, plus the estimate of what the budget did not cover. Ends a stream's text. */
  total(): number {
    if (this.tail) {
      this.countFrom(this.tail, 0, true, Infinity);
      this.tail = '';
    }
    const seen = this.exactBytes > 0 ? (this.exactTokens / this.exactBytes) * RATIO_MARGIN : 0;
    return this.exactTokens + Math.ceil(this.overBudgetBytes * Math.max(seen, MIN_TOKENS_PER_BYTE));
  }

  /** One more piece of a stream's text: complete segments are counted now, only a bounded tail is kept. */
  push(text: string): void {
    if (this.spentMs >= this.budgetMs) {
      this.overBudgetBytes += Buffer.byteLength(text);
      return;
    }
    this.tail += text;
    if (this.tail.length < FLUSH_CHARS) return;
    const stop = this.countFrom(this.tail, 0, false, Infinity);
    this.tail = this.tail.slice(stop);
  }

  /** A whole text, counted on its own (its pieces do not merge with other texts' ones). */
  add(text: string): void {
    this.countFrom(text, 0, true, Infinity);
  }

  /**
   * Adds whole texts, each counted on its own, giving the event loop a turn every few milliseconds: one
   * huge request never stalls the others (a small one finishes without waiting for a turn).
   */
  async addAll(texts: readonly string[]): Promise<void> {
    let sliceEndsAt = this.clock() + SLICE_MS;
    for (const text of texts) {
      for (let at = 0; at < text.length; ) {
        at = this.countFrom(text, at, true, sliceEndsAt);
        if (this.clock() >= sliceEndsAt) {
          await nextTurn();
          sliceEndsAt = this.clock() + SLICE_MS;
        }
      }
    }
  }

  /**
   * Counts segments of `text` from `start` until it ends, the next cut is undecided (a stream), or the
   * clock passes `untilMs`; returns where it stopped. Past the budget, the rest is sized, not counted.
   */
  private countFrom(text: string, start: number, final: boolean, untilMs: number): number {
    loadTokenizer();
    let at = start;
    while (at < text.length) {
      if (this.spentMs >= this.budgetMs) {
        // Sized in slices as well: a string of non-Latin text takes milliseconds per megabyte to measure.
        const end = Math.min(text.length, at + SIZE_SLICE_CHARS);
        this.overBudgetBytes += Buffer.byteLength(at === 0 && end === text.length ? text : text.slice(at, end));
        at = end;
        if (this.clock() >= untilMs) return at;
        continue;
      }
      const end = nextCut(text, at, final);
      if (end < 0) return at;
      const startedAt = this.clock();
      const segment = text.slice(at, end);
      this.exactTokens += countSegment(segment);
      this.exactBytes += Buffer.byteLength(segment);
      const now = this.clock();
      this.spentMs += Math.min(now - startedAt, MAX_MS_PER_SEGMENT + segment.length * MAX_MS_PER_CHAR);
      at = end;
      if (now >= untilMs) return at;
    }
    return at;
  }
}
