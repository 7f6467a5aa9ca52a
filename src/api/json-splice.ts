// A client's JSON text with one top-level string field's value replaced and every other byte as it came:
// a native cell forwards the body with only `model` changed (product.md §14) — no re-serialisation, so
// encrypted reasoning, signatures, key order, number spellings and whitespace reach the upstream intact,
// and a 100 KB body costs one scan, not a parse and a stringify. Strings are skipped with indexOf and
// nested values with one regular expression, so the scan touches few characters one by one.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** The characters that matter inside a nested value: string starts and brackets. */
const STRUCTURE = /["[\]{}]/g;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** The index just past the string that starts at `i` (a quote); -1 when it never ends. */
function stringEnd(text: string, i: number): number {
  let from = i + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote === -1) return -1;
    let backslashes = 0;
    for (let j = quote - 1; text.charCodeAt(j) === BACKSLASH; j--) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** The index just past the JSON value that starts at `i`; -1 when it never ends. */
function valueEnd(text: string, i: number): number {
  const first = text.charCodeAt(i);
  if (first === QUOTE) return stringEnd(text, i);
  if (first === OPEN_OBJECT || first === OPEN_ARRAY) {
    let depth = 0;
    STRUCTURE.lastIndex = i;
    for (let match = STRUCTURE.exec(text); match; match = STRUCTURE.exec(text)) {
      const at = match.index;
      const c = text.charCodeAt(at);
      if (c === QUOTE) {
        const end = stringEnd(text, at);
        if (end === -1) return -1;
        STRUCTURE.lastIndex = end;
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        depth++;
      } else if (--depth === 0) {
        return at + 1;
      }
    }
    return -1;
  }
  // A number, true, false or null: up to the next separator.
  let j = i;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (c === COMMA || c === CLOSE_OBJECT || c === CLOSE_ARRAY || isSpace(c)) break;
    j++;
  }
  return j;
}

/**
 * `text` (a JSON object) with the value of its top-level `key` — every occurrence, as a parser keeps the
 * last — replaced by `value` as a JSON string. Undefined when that cannot be done exactly: the text is not
 * an object, the key is absent, spelled with escapes, or its value is not a string. The caller then
 * serialises the parsed body instead.
 */
export function spliceTopLevelString(text: string, key: string, value: string): string | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== OPEN_OBJECT) return undefined;
  i = skipSpace(text, i + 1);
  const spans: Array<readonly [number, number]> = [];
  if (text.charCodeAt(i) !== CLOSE_OBJECT) {
    for (;;) {
      if (text.charCodeAt(i) !== QUOTE) return undefined;
      const keyEnd = stringEnd(text, i);
      if (keyEnd === -1) return undefined;
      const raw = text.slice(i + 1, keyEnd - 1);
      const matches = raw === key;
      // An escaped spelling of the key is the same key to a parser: not spliced exactly, so not at all.
      if (!matches && raw.includes('\\') && JSON.parse(text.slice(i, keyEnd)) === key) return undefined;
      i = skipSpace(text, keyEnd);
      if (text.charCodeAt(i) !== COLON) return undefined;
      i = skipSpace(text, i + 1);
      const end = valueEnd(text, i);
      if (end === -1) return undefined;
      if (matches) {
        if (text.charCodeAt(i) !== QUOTE) return undefined;
        spans.push([i, end]);
      }
      i = skipSpace(text, end);
      const next = text.charCodeAt(i);
      if (next === CLOSE_OBJECT) break;
      if (next !== COMMA) return undefined;
      i = skipSpace(text, i + 1);
    }
  }
  if (spans.length === 0 || skipSpace(text, i + 1) !== text.length) return undefined;
  const encoded = JSON.stringify(value);
  let out = '';
  let last = 0;
  for (const [start, end] of spans) {
    out += text.slice(last, start) + encoded;
    last = end;
  }
  return out + text.slice(last);
}
