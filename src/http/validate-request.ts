// Edge validation of client bodies. Only what the gateway itself relies on is checked (model, messages
// or input, and the fields that size the hold); every other field is forwarded untouched.
import { Ajv, type ErrorObject } from 'ajv';
import { GatewayError } from '../errors.js';
import type { ChatRequestBody, EmbeddingRequestBody } from '../providers/types.js';

const positiveIntOrNull = { type: ['integer', 'null'], minimum: 1 };

const chatSchema = {
  type: 'object',
  required: ['model', 'messages'],
  properties: {
    model: { type: 'string', minLength: 1 },
    messages: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['role'],
        properties: {
          role: { type: 'string', minLength: 1 },
          content: { type: ['string', 'array', 'null'] },
        },
      },
    },
    max_tokens: positiveIntOrNull,
    max_completion_tokens: positiveIntOrNull,
    n: { type: ['integer', 'null'], minimum: 1, maximum: 128 },
    stream: { type: ['boolean', 'null'] },
    stream_options: { type: ['object', 'null'] },
  },
};

const nonEmptyString = { type: 'string', minLength: 1 };
const tokenArray = { type: 'array', minItems: 1, items: { type: 'integer', minimum: 0 } };

const embeddingSchema = {
  type: 'object',
  required: ['model', 'input'],
  properties: {
    model: { type: 'string', minLength: 1 },
    input: {
      anyOf: [
        nonEmptyString,
        { type: 'array', minItems: 1, items: nonEmptyString },
        tokenArray,
        { type: 'array', minItems: 1, items: tokenArray },
      ],
    },
  },
};

const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true });
const checkChat = ajv.compile(chatSchema);
const checkEmbedding = ajv.compile(embeddingSchema);

/** "/messages/0/role" → "messages[0].role", the form OpenAI uses in `param`. */
function paramOf(error: ErrorObject): string | null {
  const segments = error.instancePath.split('/').slice(1);
  if (error.keyword === 'required') segments.push(String((error.params as { missingProperty: string }).missingProperty));
  let out = '';
  for (const segment of segments) out += /^\d+$/.test(segment) ? `[${segment}]` : out ? `.${segment}` : segment;
  return out || null;
}

function describe(error: ErrorObject, param: string | null): string {
  if (error.keyword === 'required') return `Missing required parameter: '${param}'.`;
  if (error.keyword === 'anyOf' && param === 'input') {
    return "Invalid 'input': expected a non-empty string, an array of non-empty strings, or token arrays.";
  }
  return `Invalid '${param ?? 'body'}': ${error.message ?? 'invalid value'}.`;
}

function reject(errors: ErrorObject[] | null | undefined): never {
  // An anyOf (embedding input) explains itself better than the first branch's complaint.
  const error = errors?.find((e) => e.keyword === 'anyOf') ?? errors?.[0];
  if (!error) throw new GatewayError('invalid_request');
  const param = paramOf(error);
  throw new GatewayError('invalid_request', { message: describe(error, param), param });
}

function ensureObject(body: unknown): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new GatewayError('invalid_request', { message: 'The request body must be a JSON object.' });
  }
}

export function validateChatRequest(body: unknown): ChatRequestBody {
  ensureObject(body);
  if (!checkChat(body)) reject(checkChat.errors);
  return body as ChatRequestBody;
}

export function validateEmbeddingRequest(body: unknown): EmbeddingRequestBody {
  ensureObject(body);
  if (!checkEmbedding(body)) reject(checkEmbedding.errors);
  return body as EmbeddingRequestBody;
}
