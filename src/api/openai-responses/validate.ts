// What a Responses request must be for the gateway to hold and route it: a model, input as a string or a
// list of items, and well-typed fields that size the hold or decide the flow (max_output_tokens, stream,
// tools, previous_response_id). Every other field goes to the upstream untouched. Two features the
// gateway does not serve are refused here, before anything is held: `background` responses (they outlive
// the request, so there is no answer to bill) and `conversation` objects (state stored upstream under no
// response id the gateway can pin).
import { GatewayError } from '../../errors.js';
import type { JsonObject } from '../../json-object.js';
import { bodyValidator } from '../validation.js';

export type ResponsesBody = JsonObject & { model: string };

const responsesSchema = {
  type: 'object',
  required: ['model'],
  properties: {
    model: { type: 'string', minLength: 1 },
    input: { type: ['string', 'array'], items: { type: 'object' } },
    instructions: { type: ['string', 'null'] },
    max_output_tokens: { type: ['integer', 'null'], minimum: 1 },
    stream: { type: ['boolean', 'null'] },
    store: { type: ['boolean', 'null'] },
    background: { type: ['boolean', 'null'] },
    previous_response_id: { type: ['string', 'null'], minLength: 1 },
    tools: { type: ['array', 'null'], items: { type: 'object', required: ['type'], properties: { type: { type: 'string' } } } },
  },
};

const checkSchema = bodyValidator<ResponsesBody>(responsesSchema, {});

export function validateResponsesRequest(raw: unknown): ResponsesBody {
  const body = checkSchema(raw);
  if (body.background === true) {
    throw new GatewayError('unsupported_parameter', {
      param: 'background',
      message: "Background responses are not supported by this gateway: send the request without 'background' and read the answer (or its stream) directly.",
    });
  }
  if (body.conversation !== undefined && body.conversation !== null) {
    throw new GatewayError('unsupported_parameter', {
      param: 'conversation',
      message: "Conversations are not supported by this gateway: send the history as 'input' (with store: false), or continue a response with 'previous_response_id'.",
    });
  }
  return body;
}
