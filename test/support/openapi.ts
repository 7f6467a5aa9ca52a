// Test-side validator: checks response bodies against schemas from the pinned OpenAI OpenAPI document.
import { AssertionError } from 'node:assert';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import formatsPlugin from 'ajv-formats';

export type SchemaName =
  | 'CreateChatCompletionResponse'
  | 'CreateChatCompletionStreamResponse'
  | 'CreateEmbeddingResponse'
  | 'ListModelsResponse'
  | 'Model'
  | 'ErrorResponse'
  | 'CreateResponse'
  | 'Response'
  | 'ResponseStreamEvent';

type JsonObject = { [key: string]: unknown };
type SchemaNode = JsonObject | boolean;

/** What the in-memory transform changed; exposed so tests and reports can see the size of the fixes. */
export interface TransformStats {
  nullableRewrites: number;
  nullableHoistedFromAllOf: number;
  nullableFalseDropped: number;
  refsRebased: number;
  recursiveRefsRewritten: number;
  exclusiveBoundsConverted: number;
  requiredDeduped: number;
  implicitObjectTypes: number;
  strippedKeywords: Record<string, number>;
}

const DOCUMENT_URL = new URL('../fixtures/openai-openapi.json', import.meta.url);
const ROOT_ID = 'openai';
const COMPONENT_REF_PREFIX = '#/components/schemas/';
const DEFS_REF_PREFIX = '#/$defs/';

// OpenAPI-only annotations and known typos that JSON Schema 2020-12 does not define. Ajv's strict mode
// rejects unknown keywords, so they go; anything *not* listed here still fails loudly at compile time.
const STRIPPED_KEYWORDS = new Set([
  'example', // OpenAPI 3.0 singular example (2020-12 only knows `examples`)
  'discriminator', // OpenAPI mapping hint; ajv only understands it with its own `discriminator` option and narrower rules
  'externalDocs',
  'xml',
  'optional', // not a keyword anywhere; one transcription schema uses it instead of leaving the property out of `required`
  'min_items', // typo for minItems, and placed on a number `items` schema where it would mean nothing anyway
  'max_items',
  '$recursiveAnchor', // draft 2019-09; replaced by a plain $ref (see rewriteRecursiveRef)
]);

// Keywords whose value is a map of name -> subschema.
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);
// Keywords whose value is an array of subschemas.
const SCHEMA_ARRAY_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
// Keywords whose value is a single subschema.
const SCHEMA_KEYWORDS = new Set([
  'items',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'contains',
  'not',
  'if',
  'then',
  'else',
]);
// Annotations kept on the outside of a nullable wrapper so they still describe the whole property.
const WRAPPER_ANNOTATIONS = ['title', 'description', 'default', 'deprecated', 'readOnly', 'writeOnly'];

function emptyStats(): TransformStats {
  return {
    nullableRewrites: 0,
    nullableHoistedFromAllOf: 0,
    nullableFalseDropped: 0,
    refsRebased: 0,
    recursiveRefsRewritten: 0,
    exclusiveBoundsConverted: 0,
    requiredDeduped: 0,
    implicitObjectTypes: 0,
    strippedKeywords: {},
  };
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function shouldStrip(keyword: string): boolean {
  // Vendor extensions (x-oaiMeta, x-stainless-const, ...) carry docs/SDK hints, not validation rules.
  return keyword.startsWith('x-') || STRIPPED_KEYWORDS.has(keyword);
}

/** Walks one schema, returning a transformed copy; `owner` is the component name, for self-references. */
function transformSchema(node: unknown, owner: string, stats: TransformStats): SchemaNode {
  if (typeof node === 'boolean') return node;
  if (!isObject(node)) throw new Error(`${owner}: expected a schema, got ${JSON.stringify(node)}`);

  // Before walking: the lone `{nullable: true}` allOf members must be seen raw, not already rewritten.
  const source = hoistNullableFromAllOf({ ...node }, stats);
  const out: JsonObject = {};
  for (const [keyword, value] of Object.entries(source)) {
    if (shouldStrip(keyword)) {
      stats.strippedKeywords[keyword] = (stats.strippedKeywords[keyword] ?? 0) + 1;
    } else if (SCHEMA_MAP_KEYWORDS.has(keyword) && isObject(value)) {
      out[keyword] = Object.fromEntries(
        Object.entries(value).map(([name, sub]) => [name, transformSchema(sub, owner, stats)]),
      );
    } else if (SCHEMA_ARRAY_KEYWORDS.has(keyword) && Array.isArray(value)) {
      out[keyword] = value.map((sub) => transformSchema(sub, owner, stats));
    } else if (SCHEMA_KEYWORDS.has(keyword)) {
      out[keyword] = transformSchema(value, owner, stats);
    } else {
      // Data-valued keywords (enum, const, default, required, ...) are copied, never walked into:
      // their contents are instance data, and a property literally named "example" must survive.
      out[keyword] = value;
    }
  }

  rebaseRef(out, stats);
  rewriteRecursiveRef(out, owner, stats);
  convertExclusiveBounds(out, stats);
  dedupeRequired(out, stats);
  return rewriteNullable(out, stats);
}

// All schemas are registered as $defs of one root, so component refs must point there instead.
function rebaseRef(schema: JsonObject, stats: TransformStats): void {
  const ref = schema.$ref;
  if (typeof ref === 'string' && ref.startsWith(COMPONENT_REF_PREFIX)) {
    schema.$ref = DEFS_REF_PREFIX + ref.slice(COMPONENT_REF_PREFIX.length);
    stats.refsRebased++;
  }
}

// CompoundFilter uses draft 2019-09's $recursiveRef "#", which ajv's 2020 dialect does not know. With the
// anchor on the component itself it just means "this component", so a plain $ref says the same thing.
function rewriteRecursiveRef(schema: JsonObject, owner: string, stats: TransformStats): void {
  if (!('$recursiveRef' in schema)) return;
  if (schema.$recursiveRef !== '#') throw new Error(`${owner}: unexpected $recursiveRef ${String(schema.$recursiveRef)}`);
  delete schema.$recursiveRef;
  schema.$ref = DEFS_REF_PREFIX + owner;
  stats.recursiveRefsRewritten++;
}

// Boolean exclusiveMinimum/exclusiveMaximum is draft-04 / OpenAPI 3.0 style and fails the 2020-12
// meta-schema; there the bound itself is the number, so move minimum/maximum into it.
function convertExclusiveBounds(schema: JsonObject, stats: TransformStats): void {
  const pairs = [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const;
  for (const [exclusive, inclusive] of pairs) {
    const flag = schema[exclusive];
    if (typeof flag !== 'boolean') continue;
    if (flag) {
      if (typeof schema[inclusive] !== 'number') throw new Error(`${exclusive}: true without a numeric ${inclusive}`);
      schema[exclusive] = schema[inclusive];
      delete schema[inclusive];
    } else {
      delete schema[exclusive];
    }
    stats.exclusiveBoundsConverted++;
  }
}

// The 2020-12 meta-schema requires `required` items to be unique (ContainerResource lists four twice).
function dedupeRequired(schema: JsonObject, stats: TransformStats): void {
  const required = schema.required;
  if (!Array.isArray(required)) return;
  const unique = [...new Set(required)];
  if (unique.length === required.length) return;
  schema.required = unique;
  stats.requiredDeduped++;
}

// OpenAPI 3.0 idiom `allOf: [{$ref: X}, {nullable: true}]` means "X or null". Rewriting the lone
// `{nullable: true}` member in place would make it always-true and still demand X, so lift the flag
// to the parent instead and drop the now-empty member.
function hoistNullableFromAllOf(schema: JsonObject, stats: TransformStats): JsonObject {
  const allOf = schema.allOf;
  if (!Array.isArray(allOf)) return schema;
  const isBareNullable = (member: unknown): boolean =>
    isObject(member) &&
    member.nullable === true &&
    Object.keys(member).every((k) => k === 'nullable' || WRAPPER_ANNOTATIONS.includes(k));
  const kept = allOf.filter((member) => !isBareNullable(member));
  if (kept.length === allOf.length) return schema;
  stats.nullableHoistedFromAllOf += allOf.length - kept.length;
  schema.allOf = kept;
  schema.nullable = true;
  return schema;
}

// `nullable` is OpenAPI 3.0; in 2020-12 it is an unknown keyword and null would be rejected. Adding
// "null" to `type` is not enough (enum/$ref/anyOf siblings would still reject null), so wrap instead.
function rewriteNullable(schema: JsonObject, stats: TransformStats): JsonObject {
  if (!('nullable' in schema)) return schema;
  const { nullable, ...rest } = schema;
  if (nullable !== true) {
    stats.nullableFalseDropped++;
    return rest;
  }
  stats.nullableRewrites++;
  const wrapper: JsonObject = {};
  for (const annotation of WRAPPER_ANNOTATIONS) {
    if (annotation in rest) {
      wrapper[annotation] = rest[annotation];
      delete rest[annotation];
    }
  }
  wrapper.anyOf = [rest, { type: 'null' }];
  return wrapper;
}

// A few top-level components (Model, OpenAIFile, some List*Response) describe objects but omit
// `type: object`. In JSON Schema `properties`/`required` then ignore non-objects, so `"x"` would pass
// as a Model; OpenAPI generators treat them as objects, so say so explicitly.
function addImplicitObjectType(schema: unknown, stats: TransformStats): unknown {
  if (!isObject(schema) || 'type' in schema || !('properties' in schema)) return schema;
  if (['$ref', 'allOf', 'anyOf', 'oneOf'].some((k) => k in schema)) return schema;
  stats.implicitObjectTypes++;
  return { type: 'object', ...schema };
}

/** Builds the single root schema `{ $id: 'openai', $defs: <components.schemas> }`, fixed up for ajv. */
export function prepareDocument(document: unknown): { root: JsonObject; stats: TransformStats } {
  if (!isObject(document) || !isObject(document.components) || !isObject(document.components.schemas)) {
    throw new Error('OpenAPI document has no components.schemas');
  }
  const stats = emptyStats();
  const defs: JsonObject = {};
  for (const [name, schema] of Object.entries(document.components.schemas)) {
    defs[name] = transformSchema(addImplicitObjectType(schema, stats), name, stats);
  }
  return { root: { $id: ROOT_ID, $defs: defs }, stats };
}

// `unixtime` (OpenAI) and `binary` (OpenAPI file uploads) are not standard formats; ajv refuses
// unknown formats, so define them. The rest of the formats in the document come from ajv-formats.
function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    // Unknown keywords and formats stay errors, so a new quirk in an updated document fails loudly.
    strictSchema: true,
    // After addImplicitObjectType, what ajv's extra type-strictness still flags is nested and valid
    // JSON Schema (e.g. `items` without `type: array`), none of it in the schemas exported here.
    strictTypes: false,
  });
  formatsPlugin.default(ajv, ['uri', 'date', 'int64', 'float', 'double']);
  ajv.addFormat('unixtime', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= 0 });
  ajv.addFormat('binary', { type: 'string', validate: () => true });
  return ajv;
}

let ajvInstance: Ajv2020 | undefined;
let lastStats: TransformStats | undefined;
const validators = new Map<SchemaName, ValidateFunction>();

function getAjv(): Ajv2020 {
  if (ajvInstance) return ajvInstance;
  const document: unknown = JSON.parse(readFileSync(DOCUMENT_URL, 'utf8'));
  const { root, stats } = prepareDocument(document);
  const ajv = createAjv();
  ajv.addSchema(root);
  ajvInstance = ajv;
  lastStats = stats;
  return ajv;
}

/** Returns the compiled validator for one component, compiling it on first use. */
export function getValidator(name: SchemaName): ValidateFunction {
  let validate = validators.get(name);
  if (!validate) {
    validate = getAjv().compile({ $ref: `${ROOT_ID}${DEFS_REF_PREFIX}${name}` });
    validators.set(name, validate);
  }
  return validate;
}

/** Counts of the fixes applied when the document was loaded (loads it if needed). */
export function getTransformStats(): TransformStats {
  getAjv();
  return structuredClone(lastStats ?? emptyStats());
}

function formatError(error: ErrorObject): string {
  const path = error.instancePath === '' ? '(root)' : error.instancePath;
  const allowed = error.keyword === 'enum' ? ` ${JSON.stringify(error.params.allowedValues)}` : '';
  return `${path} ${error.message ?? error.keyword}${allowed}`;
}

/** Human-readable validation errors for `value` against the named schema; empty when it is valid. */
export function validateAgainst(name: SchemaName, value: unknown): string[] {
  const validate = getValidator(name);
  if (validate(value)) return [];
  return (validate.errors ?? []).map(formatError);
}

const EXCERPT_LIMIT = 1500;

function excerpt(value: unknown): string {
  const json = JSON.stringify(value, null, 2) ?? String(value);
  return json.length > EXCERPT_LIMIT ? `${json.slice(0, EXCERPT_LIMIT)}\n... (${json.length} chars total)` : json;
}

/** Throws an AssertionError listing every schema violation plus an excerpt of the offending value. */
export function assertMatchesSchema(name: SchemaName, value: unknown): void {
  const errors = validateAgainst(name, value);
  if (errors.length === 0) return;
  throw new AssertionError({
    message: `value does not match ${name}:\n  ${errors.join('\n  ')}\nvalue:\n${excerpt(value)}`,
    actual: value,
    operator: 'matchesSchema',
    stackStartFn: assertMatchesSchema,
  });
}
