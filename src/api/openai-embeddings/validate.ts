// What an embeddings request must be: a model, and input as a non-empty string, strings or token arrays.
import type { EmbeddingRequestBody } from '../../providers/types.js';
import { bodyValidator } from '../validation.js';

const nonEmptyString = { type: 'string', minLength: 1 };
const tokenArray = { type: 'array', minItems: 1, items: { type: 'integer', minimum: 0 } };

const embeddingSchema = {
  type: 'object',
  required: ['model', 'input'],
  properties: {
    model: { type: 'string', minLength: 1 },
    input: {
      anyOf: [nonEmptyString, { type: 'array', minItems: 1, items: nonEmptyString }, tokenArray, { type: 'array', minItems: 1, items: tokenArray }],
    },
  },
};

export const validateEmbeddingRequest = bodyValidator<EmbeddingRequestBody>(embeddingSchema, {
  input: "Invalid 'input': expected a non-empty string, an array of non-empty strings, or token arrays.",
});
