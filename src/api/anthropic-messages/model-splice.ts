// A native cell forwards the client's body as it was sent, only `model` replaced (product.md §14): this
// finds the top-level "model" member in the JSON text and swaps its string value, leaving every other byte
// alone — thinking signatures, cache_control, tool ids, key order, whitespace, number spellings. Nothing
// is re-serialised, and only the structure is walked (strings are skipped whole), so a 115 KB agent body
// costs a few tens of microseconds.

/** Structural characters of JSON, and the quote that opens a string. */
const STRUCTURE = /["{}[\]]/g;

/** The index just past the string that opens at `quote` (a '"'); -1 if it never closes. */
function stringEnd(text: string, quote: number): number {
  let at = quote + 1;
  for (;;) {
    const close = text.indexOf('"', at);
    if (close === -1) return -1;
    // A quote preceded by an odd number of backslashes is escaped.
    let slashes = 0;
    while (text.charCodeAt(close - 1 - slashes) === 92) slashes += 1;
    if (slashes % 2 === 0) return close + 1;
    at = close + 1;
  }
}

const isSpace = (code: number): boolean => code === 32 || code === 10 || code === 13 || code === 9;

function skipSpace(text: string, at: number): number {
  while (at < text.length && isSpace(text.charCodeAt(at))) at += 1;
  return at;
}

/**
 * `text` (a JSON object, already parsed successfully) with its top-level "model" string replaced by
 * `model`; undefined when that cannot be done exactly — no such member, a value that is not a string, or
 * the member given twice (parsers disagree on which one wins): the caller then serialises the body.
 */
export function replaceModel(text: string, model: string): string | undefined {
  let depth = 0;
  let found: { start: number; end: number } | undefined;
  STRUCTURE.lastIndex = 0;
  for (let match; (match = STRUCTURE.exec(text)); ) {
    const at = match.index;
    const char = text[at];
    if (char === '"') {
      const end = stringEnd(text, at);
      if (end === -1) return undefined;
      // A key of the top-level object is a string at depth 1 followed by a colon.
      if (depth === 1) {
        const colon = skipSpace(text, end);
        if (text.charCodeAt(colon) === 58 && isModelKey(text.slice(at, end))) {
          const value = skipSpace(text, colon + 1);
          if (found || text.charCodeAt(value) !== 34) return undefined;
          const valueEnd = stringEnd(text, value);
          if (valueEnd === -1) return undefined;
          found = { start: value, end: valueEnd };
          STRUCTURE.lastIndex = valueEnd;
          continue;
        }
      }
      STRUCTURE.lastIndex = end;
    } else if (char === '{' || char === '[') {
      depth += 1;
    } else {
      depth -= 1;
    }
  }
  if (!found) return undefined;
  return text.slice(0, found.start) + JSON.stringify(model) + text.slice(found.end);
}

/** `"model"`, or the same key written with escapes. */
function isModelKey(token: string): boolean {
  if (token === '"model"') return true;
  if (!token.includes('\\')) return false;
  try {
    return JSON.parse(token) === 'model';
  } catch {
    return false;
  }
}
