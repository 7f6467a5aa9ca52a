// JSON Schema (as clients write tool parameters and response schemas) → Gemini's Schema, an OpenAPI 3.0 subset.
import { isJsonObject, type JsonObject } from '../../json-object.js';

// Keywords Gemini's Schema has, copied when their value has the right shape; everything else is dropped
// because Gemini rejects unknown schema fields with a 400.
const STRING_KEYS = ['format', 'title', 'description', 'pattern'] as const;
const COUNT_KEYS = ['minItems', 'maxItems', 'minLength', 'maxLength', 'minProperties', 'maxProperties'] as const;
const NUMBER_KEYS = ['minimum', 'maximum'] as const;
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object']);

/** A self-referencing schema (a tree node whose children are nodes) is unrolled this many levels deep;
 * counting per $ref keeps a node with several recursive children from growing exponentially. */
export const MAX_RECURSION = 3;
/** Nesting beyond this is cut, so a hostile schema cannot exhaust the stack. */
const MAX_DEPTH = 64;

interface Walk {
  readonly root: JsonObject;
  /** The $refs expanded on the way here. */
  readonly refs: readonly string[];
  readonly depth: number;
}

export function toGeminiSchema(schema: unknown): JsonObject {
  const root = isJsonObject(schema) ? schema : {};
  return convert(root, { root, refs: [], depth: 0 });
}

/** A local JSON pointer ('#/$defs/Node', '#/definitions/Node', '#'), or undefined. */
function resolvePointer(root: JsonObject, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (Array.isArray(node)) node = node[Number(key)];
    else if (isJsonObject(node)) node = node[key];
    else return undefined;
  }
  return node;
}

/** Inlines $ref (keywords beside it win, as in 2020-12) and folds allOf into one schema. */
function flatten(node: JsonObject, walk: Walk): { node: JsonObject; walk: Walk } | undefined {
  let current = node;
  let state = walk;
  while (typeof current.$ref === 'string') {
    const { $ref, ...siblings } = current;
    const ref = $ref as string;
    if (state.refs.filter((seen) => seen === ref).length >= MAX_RECURSION) return undefined;
    const target = resolvePointer(state.root, ref);
    current = isJsonObject(target) ? { ...target, ...siblings } : siblings;
    state = { ...state, refs: [...state.refs, ref] };
  }
  if (Array.isArray(current.allOf)) {
    const { allOf, ...own } = current;
    let merged: JsonObject = own;
    for (const part of allOf as unknown[]) {
      if (!isJsonObject(part)) continue;
      const flat = flatten(part, state);
      if (flat) merged = mergeInto(merged, flat.node);
    }
    current = merged;
  }
  return { node: current, walk: state };
}

/** allOf member `extra` folded into `base`: properties and required unite in order, other keywords of `base` win. */
function mergeInto(base: JsonObject, extra: JsonObject): JsonObject {
  const out: JsonObject = { ...extra, ...base };
  const baseProperties = isJsonObject(base.properties) ? base.properties : {};
  if (isJsonObject(base.properties) || isJsonObject(extra.properties)) {
    // Property order is output order for Gemini: base's first, then the member's new ones; base's values win.
    out.properties = { ...baseProperties, ...(isJsonObject(extra.properties) ? extra.properties : {}), ...baseProperties };
  }
  if (Array.isArray(base.required) || Array.isArray(extra.required)) {
    out.required = [...new Set([...(Array.isArray(base.required) ? base.required : []), ...(Array.isArray(extra.required) ? extra.required : [])])];
  }
  return out;
}

function isNullSchema(node: unknown): boolean {
  if (!isJsonObject(node)) return false;
  if (node.type === 'null' || node.const === null) return true;
  return Array.isArray(node.type) && node.type.length > 0 && node.type.every((t) => t === 'null');
}

function convert(input: JsonObject, walk: Walk): JsonObject {
  if (walk.depth > MAX_DEPTH) return {};
  const flat = flatten(input, walk);
  // A recursion cut: an object of unspecified shape keeps the request valid.
  if (!flat) return { type: 'object' };
  const { node } = flat;
  const next: Walk = { ...flat.walk, depth: flat.walk.depth + 1 };
  const out: JsonObject = {};

  const types = (Array.isArray(node.type) ? node.type : [node.type]).filter((t): t is string => typeof t === 'string');
  const concrete = types.filter((t) => TYPES.has(t));
  let nullable = node.nullable === true || types.includes('null');
  if (concrete.length > 1) {
    // ['string', 'number']: Gemini takes one type per schema, so each becomes an anyOf branch carrying the
    // type-specific keywords; only the annotations stay on top.
    const { type: _type, description, title, nullable: _n, default: fallback, ...rest } = node;
    out.anyOf = concrete.map((type) => convert({ ...rest, type }, next));
    if (typeof description === 'string') out.description = description;
    if (typeof title === 'string') out.title = title;
    if (fallback !== undefined) out.default = fallback;
    if (nullable) out.nullable = true;
    return out;
  }
  if (concrete[0] !== undefined) out.type = concrete[0];

  for (const key of STRING_KEYS) if (typeof node[key] === 'string') out[key] = node[key];
  for (const key of COUNT_KEYS) if (Number.isSafeInteger(node[key]) && (node[key] as number) >= 0) out[key] = node[key];
  for (const key of NUMBER_KEYS) if (typeof node[key] === 'number' && Number.isFinite(node[key])) out[key] = node[key];
  if (node.default !== undefined) out.default = node.default;
  if (Array.isArray(node.propertyOrdering) && node.propertyOrdering.every((k) => typeof k === 'string')) {
    out.propertyOrdering = node.propertyOrdering;
  }

  const values = Array.isArray(node.enum) ? node.enum : node.const !== undefined ? [node.const] : undefined;
  if (values) {
    // Gemini's enum is a list of strings (numbers too are written as strings); null means nullable.
    if (values.includes(null)) nullable = true;
    const list = values.filter((v) => ['string', 'number', 'boolean'].includes(typeof v)).map(String);
    if (list.length > 0) {
      out.enum = list;
      if (out.type === undefined && out.anyOf === undefined && values.every((v) => typeof v === 'string' || v === null)) out.type = 'string';
    }
  }

  if (isJsonObject(node.properties)) {
    // fromEntries keeps a property named '__proto__' as a property (an assignment would set the prototype).
    const properties: JsonObject = Object.fromEntries(
      Object.entries(node.properties).map(([name, sub]) => [name, convert(isJsonObject(sub) ? sub : {}, next)]),
    );
    // Gemini rejects an OBJECT with an empty properties map.
    if (Object.keys(properties).length > 0) out.properties = properties;
  }
  if (Array.isArray(node.required)) {
    const known = isJsonObject(out.properties) ? out.properties : undefined;
    // Naming a property that is not declared is a 400 upstream.
    const required = node.required.filter((k): k is string => typeof k === 'string' && (!known || Object.hasOwn(known, k)));
    if (required.length > 0) out.required = required;
  }
  if (isJsonObject(node.items)) out.items = convert(node.items, next);
  else if (Array.isArray(node.items)) out.items = tupleItems(node.items, next);

  const branches = [...(Array.isArray(node.anyOf) ? node.anyOf : []), ...(Array.isArray(node.oneOf) ? node.oneOf : [])];
  if (branches.length > 0) {
    // Optional<T> arrives as anyOf [T, {type: null}]: that is `nullable` in Gemini's terms.
    if (branches.some(isNullSchema)) nullable = true;
    const kept = branches.filter((b) => !isNullSchema(b)).map((b) => convert(isJsonObject(b) ? b : {}, next));
    if (kept.length === 1) Object.assign(out, { ...kept[0], ...out });
    else if (kept.length > 1) out.anyOf = kept;
  }

  if (nullable) out.nullable = true;
  return out;
}

/** Tuple-style `items: [A, B]`: Gemini has one items schema, so the positions become alternatives. */
function tupleItems(items: unknown[], walk: Walk): JsonObject {
  const converted = items.filter(isJsonObject).map((item) => convert(item, walk));
  if (converted.length === 0) return {};
  if (converted.length === 1) return converted[0]!;
  return { anyOf: converted };
}
