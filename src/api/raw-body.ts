// A client body as received, carried with the parsed body it came from: a native cell (the upstream speaks
// the client's API) forwards those bytes with only `model` replaced — thinking signatures, cache_control
// and tool ids untouched, and nothing decoded, re-encoded or re-serialised. It rides on a non-enumerable
// symbol, so any copy of the body (a clamp, stripped fields) drops it: a changed body is re-serialised, an
// unchanged one never is. Its layout (json-layout.ts) is found once, when first asked for, and shared by
// whatever needs it (the model splice, the input estimate's remembered counts).
//
// The text is needed only until the hold is sized and the first upstream request built (in that order,
// the flow's); once the bytes to forward are made it is let go, so that a request in flight keeps its
// bytes (outside V8's heap) and not a second copy inside it: with 50 Claude Code turns in flight, those
// copies outlived young-generation collections and were promoted, and full collections ran every 100 ms.
import { Buffer } from 'node:buffer';
import type { JsonBytes } from '../http/json-bytes.js';
import { topLevelMembers, type Member, type Span } from './json-layout.js';

const RAW = Symbol('tollgate.rawBody');

interface RawBody {
  /** The body's text, as the JSON parser read it; undefined once the bytes made from it are built. */
  text: string | undefined;
  /** The bytes that text was read from, and where its offsets fall in them (invalid UTF-8 is not kept). */
  readonly bytes: JsonBytes | undefined;
  /** The top-level members, once found; null when the text could not be laid out. */
  members?: readonly Member[] | null;
}

const rawOf = (body: object): RawBody | undefined => (body as { [RAW]?: RawBody })[RAW];

/**
 * Attaches `text` (and the bytes it was read from, when kept; and its top-level members, when found
 * already) to `body`, the object parsed from it — unless the parser attached them itself (body-by-members.ts).
 */
export function withRawText<Body extends object>(body: Body, text: string | undefined, bytes?: JsonBytes, members?: readonly Member[]): Body {
  if (text !== undefined && rawOf(body) === undefined) {
    const raw: RawBody = members === undefined ? { text, bytes } : { text, bytes, members };
    Object.defineProperty(body, RAW, { value: raw, enumerable: false });
  }
  return body;
}

/** The text `body` was parsed from, or undefined when it was changed (copied) since, or let go. */
export function rawTextOf(body: object): string | undefined {
  return rawOf(body)?.text;
}

/**
 * The body's top-level members (found on first use) and its text while it is kept; undefined without a
 * raw body, or when its text could not be laid out.
 */
export function rawLayoutOf(body: object): { readonly text: string | undefined; readonly members: readonly Member[] } | undefined {
  const raw = rawOf(body);
  if (raw === undefined) return undefined;
  if (raw.members === undefined) raw.members = raw.text === undefined ? null : (topLevelMembers(raw.text) ?? null);
  return raw.members === null ? undefined : { text: raw.text, members: raw.members };
}

/**
 * The body as received — its bytes when kept, else its text — with the values at `spans` (in order, of
 * its text) replaced by `replacement`, a JSON value's text. Undefined when `body` has no raw body left.
 * Kept bytes with a replacement come back as pieces (views of them around the replacement's bytes), sent
 * in order: a copy of a 116 KB body per attempt was memory V8 counts against its old generation, and
 * mark-compacted for (ADR 0053).
 */
export function splicedRaw(body: object, spans: readonly Span[], replacement: string): string | Uint8Array | readonly Uint8Array[] | undefined {
  const raw = rawOf(body);
  if (raw === undefined) return undefined;
  const { text, bytes } = raw;
  if (bytes === undefined) {
    if (text === undefined) return undefined;
    let out = '';
    let last = 0;
    for (const { start, end } of spans) {
      out += text.slice(last, start) + replacement;
      last = end;
    }
    return out + text.slice(last);
  }
  // The bytes are all that a later attempt needs (with the layout): the text goes.
  if (raw.members === undefined && text !== undefined) raw.members = topLevelMembers(text) ?? null;
  raw.text = undefined;
  if (spans.length === 0) return bytes.bytes;
  const inserted = Buffer.from(replacement);
  const pieces: Uint8Array[] = [];
  let last = 0;
  for (const { start, end } of spans) {
    pieces.push(bytes.bytes.subarray(last, bytes.byteOffset(start)), inserted);
    last = bytes.byteOffset(end);
  }
  pieces.push(bytes.bytes.subarray(last));
  return pieces;
}
