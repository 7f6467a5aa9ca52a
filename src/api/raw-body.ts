// A client body's text as received, carried with the parsed body it came from: a native cell (the
// upstream speaks the client's API) forwards those bytes with only `model` replaced — thinking signatures,
// cache_control and tool ids untouched. The text rides on a non-enumerable symbol, so any copy of the body
// (a clamp, stripped fields) drops it: a changed body is re-serialised, an unchanged one never is.
const RAW_TEXT = Symbol('tollgate.rawText');

/** Attaches `text` to `body` (the object parsed from it). */
export function withRawText<Body extends object>(body: Body, text: string | undefined): Body {
  if (text !== undefined) Object.defineProperty(body, RAW_TEXT, { value: text, enumerable: false });
  return body;
}

/** The text `body` was parsed from, or undefined when it was changed (copied) since. */
export function rawTextOf(body: object): string | undefined {
  return (body as { [RAW_TEXT]?: string })[RAW_TEXT];
}
