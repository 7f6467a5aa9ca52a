// Token counts of text, and of a request's input as texts plus fixed counts, with the o200k_base BPE in
// bounded time (token-tally.ts). Holds are estimates by contract; exact charges come from upstream usage.
// Each client API says what in its requests is input (src/api/<api>/count-input.ts).
import { COUNT_BUDGET_MS, TokenTally } from './token-tally.js';

/** Above this many characters a blob (audio, file data, a huge schema) is estimated at 4 characters per token. */
const BLOB_CHARS = 8_192;

/** The token count of one text (exact for ordinary text; see TokenTally past its time budget). */
export function countText(text: string): number {
  if (text.length === 0) return 0;
  const tally = new TokenTally(COUNT_BUDGET_MS);
  tally.add(text);
  return tally.total();
}

/**
 * A request's input as fixed counts (framing, images, blobs) and texts to tokenize; the texts are counted
 * last, together, under one time budget and giving the event loop a turn between slices.
 */
export class InputParts {
  fixed = 0;
  private readonly texts: string[] = [];

  text(text: string): void {
    if (text.length > 0) this.texts.push(text);
  }

  /** A structured value the model reads as its JSON text (tool definitions, arguments, schemas). */
  json(value: unknown): void {
    if (value === undefined || value === null) return;
    const text = JSON.stringify(value);
    if (text.length > BLOB_CHARS) this.fixed += Math.ceil(text.length / 4);
    else this.text(text);
  }

  async count(): Promise<number> {
    const tally = new TokenTally(COUNT_BUDGET_MS);
    await tally.addAll(this.texts);
    return this.fixed + tally.total();
  }
}
