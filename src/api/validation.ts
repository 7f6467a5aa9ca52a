// Edge validation of client bodies, shared by every client API: one ajv instance, and a failed check
// turned into a 400 whose `param` names the field the way OpenAI does ("messages[0].role"). Only what the
// gateway itself relies on is checked; every other field is forwarded untouched.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { GatewayError } from '../errors.js';

const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true });

/** "/messages/0/role" → "messages[0].role", the form OpenAI uses in `param`. */
function paramOf(error: ErrorObject): string | null {
  const segments = error.instancePath.split('/').slice(1);
  if (error.keyword === 'required') segments.push(String((error.params as { missingProperty: string }).missingProperty));
  let out = '';
  for (const segment of segments) out += /^\d+$/.test(segment) ? `[${segment}]` : out ? `.${segment}` : segment;
  return out || null;
}

function describe(error: ErrorObject, param: string | null, explain: Readonly<Record<string, string>>): string {
  if (error.keyword === 'required') return `Missing required parameter: '${param}'.`;
  if (error.keyword === 'anyOf' && param !== null && explain[param]) return explain[param];
  return `Invalid '${param ?? 'body'}': ${error.message ?? 'invalid value'}.`;
}

function reject(errors: ErrorObject[] | null | undefined, explain: Readonly<Record<string, string>>): never {
  // An anyOf (say, embedding input) explains itself better than the first branch's complaint.
  const error = errors?.find((e) => e.keyword === 'anyOf') ?? errors?.[0];
  if (!error) throw new GatewayError('invalid_request');
  const param = paramOf(error);
  throw new GatewayError('invalid_request', { message: describe(error, param, explain), param });
}

/**
 * A validator for one body schema: a JSON object that passes it, or a 400. `explain`: the message for
 * an `anyOf` field that has no better one (by param).
 */
export function bodyValidator<Body>(schema: object, explain: Readonly<Record<string, string>> = {}): (body: unknown) => Body {
  const check: ValidateFunction = ajv.compile(schema);
  return (body: unknown): Body => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new GatewayError('invalid_request', { message: 'The request body must be a JSON object.' });
    }
    if (!check(body)) reject(check.errors, explain);
    return body as Body;
  };
}
