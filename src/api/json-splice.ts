// A client's JSON text with one top-level string field's value replaced and every other byte as it came:
// a native cell forwards the body with only `model` changed (product.md §14) — no re-serialisation, so
// encrypted reasoning, signatures, key order, number spellings and whitespace reach the upstream intact,
// and a 100 KB body costs one scan (json-layout.ts), not a parse and a stringify.
import { topLevelMembers, type Member, type Span } from './json-layout.js';

/**
 * Where the string values of the top-level `key` are — every occurrence, as a parser keeps the last and
 * all are replaced — or undefined when that cannot be done exactly: the key is absent, spelled with
 * escapes, or a value is not a string. The caller then serialises the parsed body instead.
 */
export function stringValueSpans(members: readonly Member[], key: string): Span[] | undefined {
  const spans: Span[] = [];
  for (const member of members) {
    if (member.key !== key) continue;
    // An escaped spelling of the key is the same key to a parser: not spliced exactly, so not at all.
    if (member.escaped || !member.isString) return undefined;
    spans.push(member.value);
  }
  return spans.length === 0 ? undefined : spans;
}

/** `text` (a JSON object) with the string value of its top-level `key` replaced by `value` (see stringValueSpans). */
export function spliceTopLevelString(text: string, key: string, value: string): string | undefined {
  const members = topLevelMembers(text);
  const spans = members && stringValueSpans(members, key);
  if (spans === undefined) return undefined;
  const encoded = JSON.stringify(value);
  let out = '';
  let last = 0;
  for (const { start, end } of spans) {
    out += text.slice(last, start) + encoded;
    last = end;
  }
  return out + text.slice(last);
}
