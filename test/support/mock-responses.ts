// Mock of OpenAI's Responses API (POST /v1/responses, POST /v1/responses/input_tokens) for the tests, on the
// shared server core of mock-upstream.ts (recording, handle(), fault combinators). Its answers follow the
// shapes of recorded OpenAI Responses traffic (vercel/ai's packages/openai/src/responses/__fixtures__:
// gpt-5.1 function calls, codex-max reasoning with encrypted content, response.failed) and the OpenAPI
// document's Response / ResponseStreamEvent schemas: a Response object, or a stream framed
// `event: <type>\ndata: <json>\n\n` — response.created, response.in_progress, per item output_item.added /
// its deltas / output_item.done, and one terminal response.completed (or .incomplete / .failed) carrying
// usage; every event with a sequence_number from 0. Like OpenAI, it keeps stored responses (store not
// false) and answers 404 for a previous_response_id or item_reference it does not have.
import { TOOL_ARGUMENTS, toolResultText } from './mock-defaults.js';
import { TEST_PRICES } from './money.js';
import { startMockServer, type JsonReply, type MockReply, type MockServer, type ReceivedRequest, type SseEvent, type SseReply } from './mock-upstream.js';

export const RESPONSES_MOCK_KEY = 'sk-responses-mock-secret';
/** A second account's key: the mock keeps each account's stored responses apart, as OpenAI does. */
export const RESPONSES_BACKUP_KEY = 'sk-responses-backup-secret';
const ACCOUNTS = new Set([`Bearer ${RESPONSES_MOCK_KEY}`, `Bearer ${RESPONSES_BACKUP_KEY}`]);
export const RESPONSES_TEXT = 'Hello from the mock Responses server.';
export const REASONING_SUMMARY = 'The user wants a short answer; I will give one.';
/** The headers OpenAI puts on every answer: its account's limits and ids, never meant for the gateway's clients. */
export const UPSTREAM_HEADERS: Readonly<Record<string, string>> = {
  'x-ratelimit-limit-requests': '10000',
  'x-ratelimit-remaining-requests': '9999',
  'x-ratelimit-remaining-tokens': '29999000',
  'openai-organization': 'org-mock-account',
  'openai-processing-ms': '12',
  'openai-version': '2020-10-01',
  'x-codex-primary-used-percent': '42',
};

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export function makeResponsesUsage(input: number, output: number, opts: { cached?: number; reasoning?: number } = {}): ResponsesUsage {
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: opts.cached ?? 0, cache_write_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: opts.reasoning ?? 0 },
    total_tokens: input + output,
  };
}

/** A response the mock stored: the account (authorization) that made it, its output item ids and usage. */
interface Stored {
  readonly account: string;
  readonly items: readonly string[];
  readonly usage: ResponsesUsage;
}

export interface MockResponses extends MockServer {
  /** The provider's base_url: origin + /v1 (the gateway appends /responses). */
  url: string;
  /** Responses it stored, by id. */
  stored: Map<string, Stored>;
  /** What POST /v1/responses/input_tokens answers (so a test can tell it from the gateway's estimate). */
  inputTokensAnswer: number;
  /**
   * Answer with a message even when the request offers function tools (reset() clears it). By default the
   * model calls the first one, which keeps a coding agent going; with a message, its turn ends.
   */
  answerInText: boolean;
}

/** Input items of a request (a string input is one). */
function inputItems(body: Obj): Obj[] {
  if (typeof body.input === 'string') return [{ type: 'message', role: 'user', content: body.input }];
  return Array.isArray(body.input) ? body.input.filter(isObj) : [];
}

/**
 * The usage the mock reports, so tests can price it:
 *   input_tokens  = 30 + input items + the stored context of a previous response (its input + output)
 *   output_tokens = 12, + 20 reasoning tokens when the model name contains 'reasoning'
 */
export function responsesUsageFor(body: Obj, context = 0): ResponsesUsage {
  const reasoning = typeof body.model === 'string' && body.model.includes('reasoning') ? 20 : 0;
  return makeResponsesUsage(30 + inputItems(body).length + context, 12 + reasoning, { reasoning });
}

let sequence = 0;
const nextId = (prefix: string): string => `${prefix}_mock${(++sequence).toString(36)}${Date.now().toString(36)}`;

/**
 * The output items the model "produces": reasoning (reasoning models), then a function call (the first
 * function tool, unless `answerInText` or tool_choice none, or the input ends with a tool's output) or a message.
 */
export function outputItemsFor(body: Obj, answerInText = false): Obj[] {
  const items: Obj[] = [];
  if (typeof body.model === 'string' && body.model.includes('reasoning')) {
    const include = Array.isArray(body.include) ? body.include : [];
    items.push({
      id: nextId('rs'),
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: REASONING_SUMMARY }],
      ...(include.includes('reasoning.encrypted_content') ? { encrypted_content: `gAAAAB${Buffer.from(nextId('enc')).toString('base64')}==` } : {}),
    });
  }
  const input = inputItems(body);
  const last = input.at(-1);
  const tools = Array.isArray(body.tools) ? body.tools.filter((t) => isObj(t) && t.type === 'function') : [];
  if (tools.length > 0 && !answerInText && last?.type !== 'function_call_output' && body.tool_choice !== 'none') {
    items.push({ id: nextId('fc'), type: 'function_call', status: 'completed', arguments: TOOL_ARGUMENTS, call_id: nextId('call'), name: (tools[0] as Obj).name });
  } else {
    const text = last?.type === 'function_call_output' ? toolResultText(String(last.output)) : RESPONSES_TEXT;
    items.push({ id: nextId('msg'), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [], logprobs: [] }] });
  }
  return items;
}

export type Terminal = 'completed' | 'incomplete' | 'failed';

export interface ResponseSpec {
  id?: string;
  output?: Obj[];
  /** null: the terminal event carries no usage. */
  usage?: ResponsesUsage | null;
  terminal?: Terminal;
}

/** A Response object for `body` (the fields every Response has, per the OpenAPI schema). */
export function responseObject(body: Obj, spec: Required<Omit<ResponseSpec, 'terminal'>> & { status: string }): Obj {
  const created = Math.floor(Date.now() / 1000);
  return {
    id: spec.id,
    object: 'response',
    created_at: created,
    status: spec.status,
    background: false,
    completed_at: spec.status === 'in_progress' ? null : created,
    error: spec.status === 'failed' ? { code: 'server_error', message: 'The model failed.' } : null,
    incomplete_details: spec.status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    max_output_tokens: typeof body.max_output_tokens === 'number' ? body.max_output_tokens : null,
    model: body.model,
    output: spec.output,
    parallel_tool_calls: true,
    previous_response_id: typeof body.previous_response_id === 'string' ? body.previous_response_id : null,
    reasoning: { effort: null, summary: null },
    service_tier: 'default',
    store: body.store !== false,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: Array.isArray(body.tools) ? body.tools : [],
    top_p: 1,
    truncation: 'disabled',
    // Recordings carry `usage: null` and `user: null` until the end; the OpenAPI schema has neither as
    // nullable, so the mock leaves them out (the gateway's output is validated against the schema).
    ...(spec.usage === null ? {} : { usage: spec.usage }),
    metadata: {},
  };
}

/** Splits text into a few deltas, at word boundaries. */
function pieces(text: string): string[] {
  const words = text.split(/(?<= )/);
  const size = Math.max(1, Math.ceil(words.length / 3));
  const out: string[] = [];
  for (let i = 0; i < words.length; i += size) out.push(words.slice(i, i + size).join(''));
  return out;
}

/** The events that stream one output item (added, its deltas, done), as the recordings order them. */
function itemEvents(item: Obj, index: number): Obj[] {
  const base = { output_index: index };
  const id = item.id;
  switch (item.type) {
    case 'reasoning': {
      const text = String((item.summary as Obj[])[0]!.text);
      return [
        { type: 'response.output_item.added', ...base, item: { ...item, summary: [] } },
        { type: 'response.reasoning_summary_part.added', item_id: id, ...base, summary_index: 0, part: { type: 'summary_text', text: '' } },
        ...pieces(text).map((delta) => ({ type: 'response.reasoning_summary_text.delta', item_id: id, ...base, summary_index: 0, delta, obfuscation: 'mock' })),
        { type: 'response.reasoning_summary_text.done', item_id: id, ...base, summary_index: 0, text },
        { type: 'response.reasoning_summary_part.done', item_id: id, ...base, summary_index: 0, part: { type: 'summary_text', text } },
        { type: 'response.output_item.done', ...base, item },
      ];
    }
    case 'function_call': {
      const args = String(item.arguments);
      return [
        { type: 'response.output_item.added', ...base, item: { ...item, status: 'in_progress', arguments: '' } },
        ...pieces(args).map((delta) => ({ type: 'response.function_call_arguments.delta', item_id: id, ...base, delta, obfuscation: 'mock' })),
        { type: 'response.function_call_arguments.done', item_id: id, ...base, arguments: args },
        { type: 'response.output_item.done', ...base, item },
      ];
    }
    default: {
      const part = (item.content as Obj[])[0]!;
      const text = String(part.text);
      return [
        { type: 'response.output_item.added', ...base, item: { ...item, status: 'in_progress', content: [] } },
        { type: 'response.content_part.added', item_id: id, ...base, content_index: 0, part: { ...part, text: '' } },
        ...pieces(text).map((delta) => ({ type: 'response.output_text.delta', item_id: id, ...base, content_index: 0, delta, logprobs: [], obfuscation: 'mock' })),
        { type: 'response.output_text.done', item_id: id, ...base, content_index: 0, text, logprobs: [] },
        { type: 'response.content_part.done', item_id: id, ...base, content_index: 0, part },
        { type: 'response.output_item.done', ...base, item },
      ];
    }
  }
}

/** The stream of a response: created, in_progress, each item's events, the terminal event. */
export function responseEvents(body: Obj, spec: ResponseSpec = {}): Obj[] {
  const id = spec.id ?? nextId('resp');
  const output = spec.output ?? outputItemsFor(body);
  const usage = spec.usage === undefined ? responsesUsageFor(body) : spec.usage;
  const terminal = spec.terminal ?? 'completed';
  const start = responseObject(body, { id, output: [], usage: null, status: 'in_progress' });
  const events: Obj[] = [
    { type: 'response.created', response: start },
    { type: 'response.in_progress', response: start },
    ...output.flatMap((item, index) => itemEvents(item, index)),
    { type: `response.${terminal}`, response: responseObject(body, { id, output, usage, status: terminal }) },
  ];
  return events.map((event, index) => ({ ...event, sequence_number: index }));
}

/** Events framed as OpenAI frames them: `event: <type>` then the data line. */
export function sseOfEvents(events: Obj[]): SseEvent[] {
  return events.map((event) => ({ event: String(event.type), data: JSON.stringify(event) }));
}

/** A stream reply (events framed, OpenAI's headers). */
export function responsesStreamReply(body: Obj, spec: ResponseSpec = {}): SseReply {
  return { sse: sseOfEvents(responseEvents(body, spec)), headers: { ...UPSTREAM_HEADERS } };
}

/** A whole Response reply. */
export function responsesJsonReply(body: Obj, spec: ResponseSpec = {}): JsonReply {
  const output = spec.output ?? outputItemsFor(body);
  const terminal = spec.terminal ?? 'completed';
  const usage = spec.usage === undefined ? responsesUsageFor(body) : spec.usage;
  return { json: responseObject(body, { id: spec.id ?? nextId('resp'), output, usage, status: terminal }), headers: { ...UPSTREAM_HEADERS } };
}

/** OpenAI's error envelope. */
export function openaiError(status: number, message: string, fields: { type?: string; param?: string | null; code?: string | null } = {}): JsonReply {
  return {
    status,
    json: { error: { message, type: fields.type ?? 'invalid_request_error', param: fields.param ?? null, code: fields.code ?? null } },
    headers: { ...UPSTREAM_HEADERS },
  };
}

/** The mock's answer to one request: auth, the stored ids it names, then the response (stored unless store is false). */
function defaultResponsesReply(mock: MockResponses, req: ReceivedRequest): MockReply {
  // Azure's deployments take the key in api-key; the same two accounts.
  const account = typeof req.headers['api-key'] === 'string' ? `Bearer ${req.headers['api-key']}` : (req.headers.authorization ?? '');
  if (!ACCOUNTS.has(account)) return openaiError(401, 'Incorrect API key provided.', { code: 'invalid_api_key' });
  const body: Obj = isObj(req.body) ? req.body : {};
  if (req.method === 'POST' && req.path.endsWith('/responses/input_tokens')) {
    return { json: { object: 'response.input_tokens', input_tokens: mock.inputTokensAnswer }, headers: { ...UPSTREAM_HEADERS } };
  }
  if (req.method !== 'POST' || !req.path.endsWith('/responses')) return openaiError(404, `No route ${req.method} ${req.path}.`);
  if (typeof body.model !== 'string') return openaiError(400, "Missing required parameter: 'model'.", { param: 'model', code: 'missing_required_parameter' });
  let context = 0;
  if (typeof body.previous_response_id === 'string') {
    const previous = mock.stored.get(body.previous_response_id);
    if (!previous || previous.account !== account) return openaiError(404, `Previous response with id '${body.previous_response_id}' not found.`, { param: 'previous_response_id', code: 'previous_response_not_found' });
    context += previous.usage.input_tokens + previous.usage.output_tokens;
  }
  const known = new Set([...mock.stored.values()].filter((s) => s.account === account).flatMap((s) => s.items));
  for (const item of inputItems(body)) {
    if (item.type === 'item_reference' && !known.has(String(item.id))) return openaiError(404, `Item with id '${String(item.id)}' not found.`, { param: 'input' });
  }
  const id = nextId('resp');
  const output = outputItemsFor(body, mock.answerInText);
  const usage = responsesUsageFor(body, context);
  if (body.store !== false) mock.stored.set(id, { account, items: output.map((item) => String(item.id)), usage });
  return body.stream === true ? responsesStreamReply(body, { id, output, usage }) : responsesJsonReply(body, { id, output, usage });
}

export async function startMockResponses(): Promise<MockResponses> {
  // eslint-disable-next-line prefer-const -- the server's default reply needs the mock it belongs to
  let mock: MockResponses;
  const server = await startMockServer({ defaultReply: (req) => defaultResponsesReply(mock, req) });
  const stored = new Map<string, Stored>();
  mock = Object.assign(server, { url: `${server.origin}/v1`, stored, inputTokensAnswer: 1234, answerInText: false });
  const reset = server.reset.bind(server);
  mock.reset = () => {
    reset();
    stored.clear();
    mock.answerInText = false;
  };
  return mock;
}

/** The mock's own default for a request, for a handler that changes only part of it. */
export function mockDefault(mock: MockResponses, req: ReceivedRequest): MockReply {
  return defaultResponsesReply(mock, req);
}

/**
 * tollgate.yaml in front of the mock (the in-process and end-to-end tests' config): providers `openai` and
 * `backup` (kind openai, two accounts of the mock, retries 0) and `compat` (openai-compatible: chat only),
 * and these models at TEST_PRICES, max_output_tokens 1000, context_window 8000:
 *   gpt-resp (openai, upstream gpt-4o-mini), gpt-5-test (openai, upstream o4-mini-reasoning: a reasoning
 *   item first), gpt-pair and gpt-5-pair (the same, openai then backup, fallback), gpt-chat-only (compat), gpt-tools (openai,
 *   allow_server_tools: true), gpt-compat-resp (compat-resp: openai-compatible declaring serves responses),
 *   gpt-azure (azure: kind azure-openai at the mock's origin, deployment my-gpt-deployment), gemini-only
 *   (gemini-off: kind gemini, never called — no Responses cell reaches it).
 * `{{DB}}` is the database, as in mockConfig; `extra` is appended (top-level keys).
 */
export function responsesConfig(mock: { url: string }, extra = ''): string {
  const provider = (kind: string, key: string, more = '') => `
    kind: ${kind}
    base_url: ${mock.url}
    api_key: ${key}
    retries: 0
    timeouts: { connect_ms: 2000, first_byte_ms: 5000, idle_ms: 5000, total_ms: 30000 }
    cooldown: { failures: 1000000, seconds: 1 }${more}`;
  const model = (upstreams: string, more = '') => `
    type: chat
    upstreams: ${upstreams}
    price: { input: ${TEST_PRICES.input}, output: ${TEST_PRICES.output}, cached_input: ${TEST_PRICES.cachedInput} }
    context_window: 8000
    max_output_tokens: 1000${more}`;
  return `
server:
  host: 127.0.0.1
  port: 0
database: "{{DB}}"
providers:
  openai:${provider('openai', RESPONSES_MOCK_KEY)}
  backup:${provider('openai', RESPONSES_BACKUP_KEY)}
  compat:${provider('openai-compatible', RESPONSES_MOCK_KEY)}
  compat-resp:${provider('openai-compatible', RESPONSES_MOCK_KEY, '\n    serves: [chat, responses]')}
  azure:
    kind: azure-openai
    base_url: ${mock.url.replace(/\/v1$/, '')}
    api_key: ${RESPONSES_MOCK_KEY}
    retries: 0
  gemini-off:
    kind: gemini
    base_url: http://127.0.0.1:9
    api_key: gemini-never-called
models:
  gpt-resp:${model('[{ provider: openai, model: gpt-4o-mini }]')}
  gpt-5-test:${model('[{ provider: openai, model: o4-mini-reasoning }]')}
  gpt-pair:${model('[{ provider: openai, model: gpt-4o-mini }, { provider: backup, model: gpt-4o-mini }]')}
  gpt-5-pair:${model('[{ provider: openai, model: o4-mini-reasoning }, { provider: backup, model: o4-mini-reasoning }]')}
  gpt-chat-only:${model('[{ provider: compat, model: gpt-4o-mini }]')}
  gpt-tools:${model('[{ provider: openai, model: gpt-4o-mini }]', '\n    allow_server_tools: true')}
  gpt-compat-resp:${model('[{ provider: compat-resp, model: gpt-4o-mini }]')}
  gpt-azure:${model('[{ provider: azure, model: my-gpt-deployment }]')}
  gemini-only:${model('[{ provider: gemini-off, model: gemini-2.5-flash }]')}
${extra}`;
}
