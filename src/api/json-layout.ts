// Where things are in a client's JSON text, found in one scan: each top-level member's value, and each
// element of a top-level array. A native cell uses it to replace `model` in the bytes it forwards (every
// other byte as it came), and the input estimate to key remembered counts by the JSON text the client
// sent (a tool definition is then never serialised again). Only the structure is walked: each string is
// skipped whole with indexOf, so a 115 KB agent body costs tens of microseconds (docs/adr/0038).

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** A value's place in the text: from `start` to just before `end`. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/** A member of the top-level object. */
export interface Member {
  /** The key as a parser reads it (escapes decoded). */
  readonly key: string;
  /** The key was written with escapes. */
  readonly escaped: boolean;
  readonly value: Span;
  /** The value is a string. */
  readonly isString: boolean;
  /** The elements of an array value, in order. */
  readonly elements: readonly Span[] | undefined;
}

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

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
    // A quote preceded by an odd number of backslashes is escaped.
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
    for (let at = i; at < text.length; ) {
      const c = text.charCodeAt(at);
      if (c === QUOTE) {
        at = stringEnd(text, at);
        if (at === -1) return -1;
        continue;
      }
      if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++;
      else if ((c === CLOSE_OBJECT || c === CLOSE_ARRAY) && --depth === 0) return at + 1;
      at++;
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

/** The elements of the array that starts at `i`, and the index just past it; undefined when malformed. */
function arrayElements(text: string, i: number): { elements: Span[]; end: number } | undefined {
  const elements: Span[] = [];
  let at = skipSpace(text, i + 1);
  if (text.charCodeAt(at) === CLOSE_ARRAY) return { elements, end: at + 1 };
  for (;;) {
    const end = valueEnd(text, at);
    if (end === -1) return undefined;
    elements.push({ start: at, end });
    at = skipSpace(text, end);
    const next = text.charCodeAt(at);
    if (next === CLOSE_ARRAY) return { elements, end: at + 1 };
    if (next !== COMMA) return undefined;
    at = skipSpace(text, at + 1);
  }
}

/**
 * The members of the JSON object `text`, in order (a key given twice is listed twice); undefined when
 * the text is not exactly one object (the caller has parsed it: this only guards against surprises).
 */
export function topLevelMembers(text: string): Member[] | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== OPEN_OBJECT) return undefined;
  i = skipSpace(text, i + 1);
  const members: Member[] = [];
  if (text.charCodeAt(i) !== CLOSE_OBJECT) {
    for (;;) {
      if (text.charCodeAt(i) !== QUOTE) return undefined;
      const keyEnd = stringEnd(text, i);
      if (keyEnd === -1) return undefined;
      const written = text.slice(i + 1, keyEnd - 1);
      const escaped = written.includes('\\');
      let key = written;
      if (escaped) {
        try {
          key = JSON.parse(text.slice(i, keyEnd)) as string;
        } catch {
          return undefined;
        }
      }
      i = skipSpace(text, keyEnd);
      if (text.charCodeAt(i) !== COLON) return undefined;
      i = skipSpace(text, i + 1);
      let end: number;
      let elements: Span[] | undefined;
      if (text.charCodeAt(i) === OPEN_ARRAY) {
        const array = arrayElements(text, i);
        if (array === undefined) return undefined;
        ({ elements, end } = array);
      } else {
        end = valueEnd(text, i);
        if (end === -1) return undefined;
      }
      members.push({ key, escaped, value: { start: i, end }, isString: text.charCodeAt(i) === QUOTE, elements });
      i = skipSpace(text, end);
      const next = text.charCodeAt(i);
      if (next === CLOSE_OBJECT) break;
      if (next !== COMMA) return undefined;
      i = skipSpace(text, i + 1);
    }
  }
  return skipSpace(text, i + 1) === text.length ? members : undefined;
}

/** The member a parser keeps for `key` (the last one), if any. */
export function memberOf(members: readonly Member[], key: string): Member | undefined {
  return members.findLast((m) => m.key === key);
}

/** The text of `span`. */
export const spanText = (text: string, span: Span): string => text.slice(span.start, span.end);
