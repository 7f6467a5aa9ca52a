// Token counts of text, and of a request's input as texts plus fixed counts, with the o200k_base BPE in
// bounded time (token-tally.ts). Holds are estimates by contract; exact charges come from upstream usage.
// Each client API says what in its requests is input (src/api/<api>/count-input.ts).
//
// Long texts are remembered (block-counts.ts): an agent's next turn counts only what is new. A structured
// value the model reads as JSON (tool definitions) is keyed by the JSON text the client sent, when the API
// has it (`raw`): a repeated definition is then neither serialised nor counted again.
import { REMEMBERED_MIN_CHARS, rememberedCounts, type BlockCounts } from './block-counts.js';
import { COUNT_BUDGET_MS, TokenTally } from './token-tally.js';

/** Above this many characters a blob (audio, file data, a huge schema) is estimated at 4 characters per token. */
export const BLOB_CHARS = 8_192;

/** A value the model reads as its JSON text; `raw`: that JSON as the client sent it, when known. */
export interface JsonPart {
  readonly value: unknown;
  readonly raw: string | undefined;
}

/** A text the model reads, or a value it reads as JSON. */
export type CountPart = string | JsonPart;

/** The token count of one text (exact for ordinary text; see TokenTally past its time budget). */
export function countText(text: string): number {
  if (text.length === 0) return 0;
  const tally = new TokenTally(COUNT_BUDGET_MS);
  tally.add(text);
  return tally.total();
}

/** A JSON text's estimate when it is a blob (longer than BLOB_CHARS), else undefined: it is counted. */
function blobTokens(text: string): number | undefined {
  return text.length > BLOB_CHARS ? Math.ceil(text.length / 4) : undefined;
}

/**
 * The tokens of `parts`, counted on `tally` (its time budget shared by the request) or remembered in
 * `memory`. Short texts are counted together at the end.
 */
export async function countParts(tally: TokenTally, parts: readonly CountPart[], memory: BlockCounts = rememberedCounts): Promise<number> {
  let total = 0;
  const short: string[] = [];
  for (const part of parts) {
    let text: string;
    let key: string;
    if (typeof part === 'string') {
      text = key = part;
      if (text.length < REMEMBERED_MIN_CHARS) {
        short.push(text);
        continue;
      }
      const known = memory.get(key);
      if (known !== undefined) {
        total += known;
        continue;
      }
    } else {
      const raw = part.raw !== undefined && part.raw.length >= REMEMBERED_MIN_CHARS ? part.raw : undefined;
      const known = raw === undefined ? undefined : memory.get(raw);
      if (known !== undefined) {
        total += known;
        continue;
      }
      text = JSON.stringify(part.value) ?? '';
      key = raw ?? text;
      const blob = blobTokens(text);
      if (blob !== undefined) {
        total += blob;
        if (raw !== undefined) memory.set(raw, blob);
        continue;
      }
      if (key.length < REMEMBERED_MIN_CHARS) {
        short.push(text);
        continue;
      }
      if (raw === undefined) {
        const again = memory.get(key);
        if (again !== undefined) {
          total += again;
          continue;
        }
      }
    }
    const before = tally.total();
    await tally.addAll([text]);
    const count = tally.total() - before;
    total += count;
    // Only an exact count is remembered (past the time budget it is an estimate).
    if (tally.exact) memory.set(key, count);
  }
  const before = tally.total();
  await tally.addAll(short);
  return total + tally.total() - before;
}

/**
 * A request's input as fixed counts (framing, images) and parts to count; the parts are counted last,
 * together, under one time budget and giving the event loop a turn between slices.
 */
export class InputParts {
  fixed = 0;
  private readonly parts: CountPart[] = [];

  text(text: string): void {
    if (text.length > 0) this.parts.push(text);
  }

  /** A structured value the model reads as its JSON text (tool definitions, arguments, schemas); `raw`: as the client sent it. */
  json(value: unknown, raw?: string): void {
    if (value === undefined || value === null) return;
    this.parts.push({ value, raw });
  }

  async count(): Promise<number> {
    return this.fixed + (await countParts(new TokenTally(COUNT_BUDGET_MS), this.parts));
  }
}
