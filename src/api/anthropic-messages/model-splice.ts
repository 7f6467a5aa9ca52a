// A native cell forwards the client's body as it was sent, only `model` replaced (product.md §14): this
// finds the top-level "model" member in the JSON text (json-layout.ts) so its string value can be swapped,
// leaving every other byte alone — thinking signatures, cache_control, tool ids, key order, whitespace,
// number spellings. Nothing is re-serialised (docs/adr/0038).
import { topLevelMembers, type Member, type Span } from '../json-layout.js';

/**
 * Where the top-level "model" string is (its key may be written with escapes); undefined when it cannot
 * be replaced exactly — no such member, a value that is not a string, or the member given twice (parsers
 * disagree on which one wins): the caller then serialises the body.
 */
export function modelSpan(members: readonly Member[]): Span | undefined {
  const found = members.filter((m) => m.key === 'model');
  return found.length === 1 && found[0]!.isString ? found[0]!.value : undefined;
}

/** `text` (a JSON object, already parsed successfully) with its top-level "model" string replaced by `model` (see modelSpan). */
export function replaceModel(text: string, model: string): string | undefined {
  const members = topLevelMembers(text);
  const span = members && modelSpan(members);
  if (span === undefined) return undefined;
  return text.slice(0, span.start) + JSON.stringify(model) + text.slice(span.end);
}
