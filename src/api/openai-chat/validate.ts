// What a chat completion request must be for the gateway to hold and route it: a model, messages with a
// role each, and well-typed fields that size the hold (max_tokens, max_completion_tokens, n, stream).
import type { ChatRequestBody } from '../../providers/types.js';
import { bodyValidator } from '../validation.js';

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

export const validateChatRequest = bodyValidator<ChatRequestBody>(chatSchema);
