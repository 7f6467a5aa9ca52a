// The Response object a translated cell answers with (whole, or inside a stream's events): the fields
// every Response has (the OpenAPI schema's), the request's settings echoed, the id `resp_` + the gateway's
// request id (the chat completion's id names nothing a client could use), and the status a chat
// finish_reason means — `length` is `incomplete` (max_output_tokens), `content_filter` `incomplete`
// (content_filter), anything else `completed`.
import type { JsonObject } from '../../../json-object.js';
import type { ResponsesBody } from '../validate.js';

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

export interface ResponseEnd {
  readonly status: ResponseStatus;
  readonly incomplete_details: JsonObject | null;
}

/** What a chat finish_reason makes of the response. */
export function endOf(finishReason: unknown): ResponseEnd {
  if (finishReason === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finishReason === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

export function responseObject(body: ResponsesBody, id: string, createdAt: number, status: ResponseStatus, output: readonly JsonObject[], extra: JsonObject = {}): JsonObject {
  const echo = (value: unknown, fallback: unknown) => (value === undefined || value === null ? fallback : value);
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    max_output_tokens: typeof body.max_output_tokens === 'number' ? body.max_output_tokens : null,
    model: body.model,
    output: [...output],
    parallel_tool_calls: echo(body.parallel_tool_calls, true),
    previous_response_id: null,
    reasoning: echo(body.reasoning, { effort: null, summary: null }),
    store: false,
    temperature: echo(body.temperature, 1),
    text: echo(body.text, { format: { type: 'text' } }),
    tool_choice: echo(body.tool_choice, 'auto'),
    tools: Array.isArray(body.tools) ? body.tools : [],
    top_p: echo(body.top_p, 1),
    truncation: 'disabled',
    metadata: {},
    ...extra,
  };
}
