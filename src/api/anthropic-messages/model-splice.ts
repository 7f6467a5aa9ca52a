// A native cell forwards the client's body as it was sent, only `model` replaced (product.md §14): this
// finds the top-level "model" member in the JSON text and swaps its string value, leaving every other byte
// alone — thinking signatures, cache_control, tool ids, key order, whitespace, number spellings. Nothing
// is re-serialised, and only the structure is walked (each string is skipped whole with indexOf), so a
// 115 KB agent body costs tens of microseconds (docs/adr/0038).

const QUOTE = 34;
const BACKSLASH = 92;
const COLON = 58;
const OPEN_OBJECT = 123;
const OPEN_ARRAY = 91;
const CLOSE_OBJECT = 125;
const CLOSE_ARRAY = 93;

/** The index just past the string that opens at `quote` (a '"'); -1 if it never closes. */
function stringEnd(text: string, quote: number): number {
  let at = quote + 1;
  for (;;) {
    const close = text.indexOf('"', at);
    if (close === -1) return -1;
    // A quote preceded by an odd number of backslashes is escaped.
    let slashes = 0;
    while (text.charCodeAt(close - 1 - slashes) === BACKSLASH) slashes += 1;
    if (slashes % 2 === 0) return close + 1;
    at = close + 1;
  }
}

const isSpace = (code: number): boolean => code === 32 || code === 10 || code === 13 || code === 9;

function skipSpace(text: string, at: number): number {
  while (at < text.length && isSpace(text.charCodeAt(at))) at += 1;
  return at;
}

/** `"model"`, or the same key written with escapes. */
function isModelKey(text: string, start: number, end: number): boolean {
  if (end - start === 7 && text.startsWith('"model"', start)) return true;
  const token = text.slice(start, end);
  if (!token.includes('\\')) return false;
  try {
    return JSON.parse(token) === 'model';
  } catch {
    return false;
  }
}

/**
 * `text` (a JSON object, already parsed successfully) with its top-level "model" string replaced by
 * `model`; undefined when that cannot be done exactly — no such member, a value that is not a string, or
 * the member given twice (parsers disagree on which one wins): the caller then serialises the body.
 */
export function replaceModel(text: string, model: string): string | undefined {
  let depth = 0;
  let found: { start: number; end: number } | undefined;
  for (let at = 0; at < text.length; ) {
    const code = text.charCodeAt(at);
    if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      depth += 1;
      at += 1;
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      depth -= 1;
      at += 1;
    } else if (code !== QUOTE) {
      at += 1;
    } else {
      const end = stringEnd(text, at);
      if (end === -1) return undefined;
      // A key of the top-level object is a string at depth 1 followed by a colon.
      if (depth === 1) {
        const colon = skipSpace(text, end);
        if (text.charCodeAt(colon) === COLON && isModelKey(text, at, end)) {
          const value = skipSpace(text, colon + 1);
          if (found || text.charCodeAt(value) !== QUOTE) return undefined;
          const valueEnd = stringEnd(text, value);
          if (valueEnd === -1) return undefined;
          found = { start: value, end: valueEnd };
          at = valueEnd;
          continue;
        }
      }
      at = end;
    }
  }
  if (!found) return undefined;
  return text.slice(0, found.start) + JSON.stringify(model) + text.slice(found.end);
}
