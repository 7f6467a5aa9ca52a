// The JSON body parser of the client APIs with native cells (Messages, Responses), whose large bodies come
// from coding agents: a Claude Code turn is 115 KB, of which 108 KB (tool definitions, system blocks) it
// sent on the turn before, and the history grows by a turn each time. Parsing the whole body — and first
// escaping its non-ASCII characters for a one-byte string — was a quarter of the gateway's CPU for such a
// turn (docs/adr/0053). Here the body's top-level members are found in one scan of its bytes read as
// Latin-1 (one character per byte: the text's offsets are the bytes', and a quote or a brace is never part
// of a multi-byte character), each element of a top-level array and each other value is taken from the
// remembered blocks (parsed-blocks.ts) or parsed alone, and the object is assembled in the body's order —
// the object JSON.parse would have made, the same keys in the same order, the last of a repeated key kept.
//
// The server's parser keeps the last word: on anything this path does not accept plainly — a value that
// does not parse, one nested too deep, a `__proto__` or `constructor` key anywhere, a top-level key with
// non-ASCII characters, bytes that are not UTF-8 — the body goes to it whole, and its verdict and errors
// are the gateway's as before. A small body goes to it too: one JSON.parse is cheaper than assembling one.
import { isAscii, isUtf8, type Buffer } from 'node:buffer';
import { isPlainWithin, MAX_JSON_DEPTH, type JsonBytesParser } from '../http/json-body.js';
import { asRead } from '../http/json-bytes.js';
import { topLevelMembers, type Member, type Span } from './json-layout.js';
import { REMEMBERED_MIN_BYTES, rememberedBlocks, type ParsedBlocks } from './parsed-blocks.js';
import { withRawText } from './raw-body.js';

/** Smaller bodies are parsed whole. */
export const BY_MEMBERS_MIN_BYTES = 8_192;

/** A piece that is not a plain JSON value: the whole body goes to the server's parser. */
const NOT_PLAIN = Symbol('not plain');

/** True when `key` is all ASCII (read from Latin-1 text, any other key would be misread). */
function isAsciiKey(key: string): boolean {
  for (let i = 0; i < key.length; i++) if (key.charCodeAt(i) >= 0x80) return false;
  return true;
}

/** The value at `span`: remembered, or parsed and checked (`levels`: how deep it may still nest). */
function piece(bytes: Buffer, text: string, span: Span, levels: number, blocks: ParsedBlocks): unknown {
  const { start, end } = span;
  const remembered = end - start >= REMEMBERED_MIN_BYTES;
  if (remembered) {
    const known = blocks.get(bytes, start, end);
    if (known !== undefined) return known;
  }
  let value: unknown;
  try {
    // An ASCII piece reads the same from the Latin-1 text; any other is decoded as UTF-8 on its own.
    value = JSON.parse(isAscii(bytes.subarray(start, end)) ? text.slice(start, end) : bytes.toString('utf8', start, end));
  } catch {
    return NOT_PLAIN;
  }
  if (!isPlainWithin(value, levels)) return NOT_PLAIN;
  return remembered ? blocks.set(bytes, start, end, value) : value;
}

/** The parsed body, the Latin-1 text it was laid out from and its members; undefined: parse it whole. */
export interface BodyByMembers {
  readonly value: Record<string, unknown>;
  readonly text: string;
  readonly members: readonly Member[];
}

/** `bytes` (valid UTF-8) parsed member by member, as above; undefined when the server's parser must decide. */
export function parseByMembers(bytes: Buffer, maxDepth = MAX_JSON_DEPTH, blocks: ParsedBlocks = rememberedBlocks): BodyByMembers | undefined {
  // The top-level object is level 1, a member's value level 2, an element of a member's array level 3.
  if (maxDepth < 3) return undefined;
  const text = bytes.toString('latin1');
  const members = topLevelMembers(text);
  if (members === undefined) return undefined;
  const value: Record<string, unknown> = {};
  for (const member of members) {
    const { key, elements } = member;
    // Assigned, `__proto__` would set the prototype; both are errors to the server's parser anyway.
    if (key === '__proto__' || key === 'constructor' || !isAsciiKey(key)) return undefined;
    let parsed: unknown;
    if (elements === undefined) {
      parsed = piece(bytes, text, member.value, maxDepth - 1, blocks);
      if (parsed === NOT_PLAIN) return undefined;
    } else {
      const items = new Array<unknown>(elements.length);
      for (let i = 0; i < elements.length; i++) {
        const item = piece(bytes, text, elements[i]!, maxDepth - 2, blocks);
        if (item === NOT_PLAIN) return undefined;
        items[i] = item;
      }
      parsed = items;
    }
    value[key] = parsed;
  }
  return { value, text, members };
}

/**
 * The body parser of an API with native cells: a large UTF-8 body member by member, its raw text, bytes
 * and layout attached to the parsed object for the native cell; anything else to `whole`, the server's.
 */
export function byMembers(whole: JsonBytesParser): JsonBytesParser {
  return function parseBodyByMembers(request, body, done) {
    const laid = body.length >= BY_MEMBERS_MIN_BYTES && isUtf8(body) ? parseByMembers(body) : undefined;
    if (laid === undefined) return whole(request, body, done);
    done(null, withRawText(laid.value, laid.text, asRead(body), laid.members));
  };
}
