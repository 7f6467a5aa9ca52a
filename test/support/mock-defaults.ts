// The mock upstream's default (unscripted) behaviour: deterministic OpenAI-compatible replies per endpoint.
import {
  DEFAULT_TEXT,
  azurePreludeChunk,
  chatChunks,
  chatCompletion,
  embeddingList,
  errorReply,
  makeUsage,
  sseFromChunks,
  type MockReply,
  type ToolCallSpec,
  type Usage,
} from './mock-builders.js';

/** What the defaults need to know about a request (a subset of ReceivedRequest). */
export interface DefaultInput {
  method: string;
  path: string;
  /** Path and query as received; only Azure's deployment paths read it (for `api-version`). */
  url?: string;
  body: unknown;
  rawBody: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export const MOCK_MODELS = ['gpt-4o-mini', 'gpt-4o', 'o3-mini-reasoning', 'text-embedding-3-small'];
export const JSON_MODE_TEXT = '{"answer":42}';
export const TOOL_ARGUMENTS = '{"location":"Paris"}';
const REASONING_TOKENS = 16;
/** How the mocks (OpenAI, Anthropic, Gemini) answer a conversation that ends in a tool result. */
export const toolResultText = (result: string): string => `The tool returned: ${result}`;
const EMBEDDING_DIMS = 8;

/**
 * Default chat usage, so tests can compute the expected charge:
 *   prompt_tokens     = 10 + messages.length
 *   reasoning_tokens  = 16 if the model name contains 'reasoning', else 0
 *   completion_tokens = 7 + reasoning_tokens   (reasoning is counted inside completion, as OpenAI does)
 *   total_tokens      = prompt_tokens + completion_tokens;  cached_tokens = 0
 */
export function defaultUsageFor(body: unknown): Usage {
  const b = isObj(body) ? body : {};
  const messages = Array.isArray(b.messages) ? b.messages.length : 0;
  const reasoning = typeof b.model === 'string' && b.model.includes('reasoning') ? REASONING_TOKENS : 0;
  return makeUsage(10 + messages, 7 + reasoning, { reasoning });
}

/** Embedding inputs as a list: a string or a single token array is one input. */
function embeddingInputs(input: unknown): Array<string | number[]> | undefined {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input) || input.length === 0) return undefined;
  if (input.every((x) => typeof x === 'number')) return [input];
  const ok = input.every((x) => typeof x === 'string' || (Array.isArray(x) && x.every((t) => typeof t === 'number')));
  return ok ? (input as Array<string | number[]>) : undefined;
}

/**
 * Default embeddings usage: per input, a string counts its whitespace-separated words (at least 1),
 * a token array counts its length; prompt_tokens = total_tokens = the sum.
 */
export function defaultEmbeddingUsageFor(body: unknown): { prompt_tokens: number; total_tokens: number } {
  const inputs = embeddingInputs(isObj(body) ? body.input : undefined) ?? [];
  const tokens = inputs.reduce<number>((sum, x) => sum + (typeof x === 'string' ? Math.max(1, x.split(/\s+/).filter(Boolean).length) : x.length), 0);
  return { prompt_tokens: tokens, total_tokens: tokens };
}

/** A deterministic vector per input (FNV-1a seeded), rounded to float32 so base64 decodes to the same numbers. */
export function defaultEmbeddingFor(input: string | number[], dims = EMBEDDING_DIMS): number[] {
  const text = typeof input === 'string' ? input : input.join(',');
  let seed = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) seed = Math.imul(seed ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return Array.from({ length: dims }, (_, i) => Math.fround(Math.sin(seed + i)));
}

/** The tool the model "chooses": tool_choice's named function, else the first tool; none with tool_choice 'none'. */
function chosenTool(b: Obj): string | undefined {
  if (!Array.isArray(b.tools) || b.tools.length === 0 || b.tool_choice === 'none') return undefined;
  const named = isObj(b.tool_choice) && isObj(b.tool_choice.function) ? b.tool_choice.function.name : undefined;
  if (typeof named === 'string') return named;
  const first: unknown = b.tools[0];
  const name = isObj(first) && isObj(first.function) ? first.function.name : undefined;
  return typeof name === 'string' ? name : 'tool';
}

/** Whether tool_choice obliges the model to call a tool ('required' or a named function). */
const forcesTool = (b: Obj): boolean => b.tool_choice === 'required' || isObj(b.tool_choice);

/** The text of the conversation's last message when it is a tool result (a string or text parts). */
function lastToolResult(b: Obj): string | undefined {
  const last: unknown = Array.isArray(b.messages) ? b.messages.at(-1) : undefined;
  if (!isObj(last) || last.role !== 'tool') return undefined;
  if (typeof last.content === 'string') return last.content;
  return Array.isArray(last.content) ? last.content.map((p: unknown) => (isObj(p) && typeof p.text === 'string' ? p.text : '')).join('') : '';
}

function isJsonMode(b: Obj): boolean {
  const type = isObj(b.response_format) ? b.response_format.type : undefined;
  return type === 'json_object' || type === 'json_schema';
}

/** Azure's per-choice and per-prompt content-filter verdicts. */
function withAzureFilterResults(body: Obj): Obj {
  const prelude = azurePreludeChunk();
  const choices = Array.isArray(body.choices) ? body.choices.map((c: unknown) => ({ ...(isObj(c) ? c : {}), content_filter_results: {} })) : [];
  return { ...body, choices, prompt_filter_results: prelude.prompt_filter_results };
}

function defaultChat(b: Obj, id: string, azure = false): MockReply {
  if (typeof b.model !== 'string' || b.model === '') return errorReply(400, 'you must provide a model parameter');
  if (!Array.isArray(b.messages)) return errorReply(400, "Missing required parameter: 'messages'.", { param: 'messages', code: 'missing_required_parameter' });
  // A tool result answers the call: where the model would call a tool again, it replies in text instead,
  // unless the request forces another call.
  const toolResult = chosenTool(b) !== undefined && !forcesTool(b) ? lastToolResult(b) : undefined;
  const tool = toolResult === undefined ? chosenTool(b) : undefined;
  const toolCalls: ToolCallSpec[] | undefined = tool ? [{ id: 'call_mock_1', name: tool, arguments: TOOL_ARGUMENTS }] : undefined;
  const text = toolResult !== undefined ? toolResultText(toolResult) : isJsonMode(b) ? JSON_MODE_TEXT : DEFAULT_TEXT;
  const spec = { id, model: b.model, usage: defaultUsageFor(b), toolCalls, content: tool ? null : text };
  if (b.stream !== true) return { json: azure ? withAzureFilterResults(chatCompletion(spec)) : chatCompletion(spec) };
  // OpenAI sends usage only when asked for, in a trailing `choices: []` chunk.
  const includeUsage = isObj(b.stream_options) && b.stream_options.include_usage === true;
  return sseFromChunks(chatChunks({ ...spec, usageMode: includeUsage ? 'final-chunk' : 'none', azurePrelude: azure }));
}

function defaultEmbeddings(b: Obj): MockReply {
  if (typeof b.model !== 'string' || b.model === '') return errorReply(400, 'you must provide a model parameter');
  const inputs = embeddingInputs(b.input);
  if (!inputs) return errorReply(400, "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", { param: 'input' });
  const dims = typeof b.dimensions === 'number' && b.dimensions > 0 ? Math.min(b.dimensions, 4096) : EMBEDDING_DIMS;
  const vectors = inputs.map((x) => defaultEmbeddingFor(x, dims));
  const usage = defaultEmbeddingUsageFor(b);
  return { json: embeddingList(vectors, { model: b.model, promptTokens: usage.prompt_tokens, base64: b.encoding_format === 'base64' }) };
}

/** Azure OpenAI: /openai/deployments/{deployment}/{operation}?api-version=... (the body's model is ignored there). */
const AZURE_PATH = /^\/openai\/deployments\/[^/]+\/(chat\/completions|embeddings)$/;

function azureReply(req: DefaultInput, operation: string, b: Obj, id: string): MockReply {
  const query = new URLSearchParams(req.url?.split('?')[1] ?? '');
  // What Azure answers without an api-version.
  if (!query.get('api-version')) return { status: 404, json: { error: { code: '404', message: 'Resource not found' } } };
  return operation === 'embeddings' ? defaultEmbeddings(b) : defaultChat(b, id, true);
}

const modelObject = (id: string) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'mock-upstream' });

/**
 * The reply the mock gives when no handler is set. Handlers can call this to fall back to (or decorate)
 * the default. `id` becomes the chat completion id.
 */
export function defaultReply(req: DefaultInput, id = 'chatcmpl-mock'): MockReply {
  const { method, path, body } = req;
  if (method === 'POST' && req.rawBody !== '' && body === undefined) {
    return errorReply(400, 'We could not parse the JSON body of your request. The API expects a JSON payload.');
  }
  if (method === 'GET' && path === '/v1/models') return { json: { object: 'list', data: MOCK_MODELS.map(modelObject) } };
  if (method === 'GET' && path.startsWith('/v1/models/')) return { json: modelObject(decodeURIComponent(path.slice('/v1/models/'.length))) };
  const b = isObj(body) ? body : {};
  if (method === 'POST' && path === '/v1/chat/completions') return defaultChat(b, id);
  if (method === 'POST' && path === '/v1/embeddings') return defaultEmbeddings(b);
  const azure = method === 'POST' ? AZURE_PATH.exec(path) : null;
  if (azure) return azureReply(req, azure[1]!, b, id);
  return errorReply(404, `Invalid URL (${method} ${path})`);
}
