// What a Messages request must be for the gateway to hold and route it: a model, messages with a role
// and content each, and `max_tokens` — required by the Messages API, and what the hold's output side is
// sized on (a request without it is a 400 before any hold). Every other field goes upstream untouched.
import type { JsonObject } from '../../json-object.js';
import { bodyValidator } from '../validation.js';

export type MessagesRequestBody = JsonObject & {
  model: string;
  messages: JsonObject[];
  max_tokens: number;
  stream?: boolean;
  system?: unknown;
  tools?: unknown;
  thinking?: JsonObject;
};

/** count_tokens takes the same prompt, without max_tokens. */
export type CountTokensBody = JsonObject & { model: string; messages: JsonObject[] };

const messagesProperty = {
  type: 'array',
  minItems: 1,
  items: {
    type: 'object',
    required: ['role', 'content'],
    properties: {
      role: { type: 'string', minLength: 1 },
      content: { type: ['string', 'array'] },
    },
  },
};

const promptProperties = {
  model: { type: 'string', minLength: 1 },
  messages: messagesProperty,
  system: { type: ['string', 'array'] },
  tools: { type: 'array', items: { type: 'object' } },
  thinking: {
    type: 'object',
    required: ['type'],
    properties: { type: { type: 'string' }, budget_tokens: { type: 'integer', minimum: 1 } },
  },
};

export const validateMessagesRequest = bodyValidator<MessagesRequestBody>({
  type: 'object',
  required: ['model', 'max_tokens', 'messages'],
  properties: {
    ...promptProperties,
    max_tokens: { type: 'integer', minimum: 1 },
    stream: { type: 'boolean' },
  },
});

export const validateCountTokensRequest = bodyValidator<CountTokensBody>({
  type: 'object',
  required: ['model', 'messages'],
  properties: promptProperties,
});
