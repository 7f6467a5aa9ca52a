// Builders for OpenAI-shaped bodies and declarative mock replies, used to script the mock upstream in tests.

/** One SSE event: a bare string is the `data:` payload (JSON text or '[DONE]'); the object form adds `event:`. */
export type SseEvent = string | { event?: string; data: string };

interface ReplyBase {
  status?: number;
  headers?: Record<string, string>;
}

/** Fault knobs shared by the streaming replies; both count events (sse) or elements (rawSse). */
interface StreamKnobs {
  /** Pause between events, to drip slowly. */
  delayMs?: number;
  /** Close the socket mid-body after this many events (the chunked body never terminates). */
  cutAfter?: number;
  /** Stop writing after this many events but keep the socket open (for idle-timeout tests). */
  stallAfter?: number;
}

export interface JsonReply extends ReplyBase {
  json: unknown;
}
/** A non-JSON body, e.g. the HTML error page a proxy in front of a provider returns. */
export interface BodyReply extends ReplyBase {
  body: string | Buffer;
}
export interface SseReply extends ReplyBase, StreamKnobs {
  sse: SseEvent[];
}
/** Bytes written as-is, one `write()` per element, to test parsers against odd framing. */
export interface RawSseReply extends ReplyBase, StreamKnobs {
  rawSse: string | Buffer | Array<string | Buffer>;
}
export type MockReply = JsonReply | BodyReply | SseReply | RawSseReply;

export function isStreamReply(reply: MockReply): reply is SseReply | RawSseReply {
  return 'sse' in reply || 'rawSse' in reply;
}

/** Frames one event exactly as OpenAI does: `data: <payload>\n\n` (multi-line data gets one `data:` per line). */
export function formatSseEvent(event: SseEvent): string {
  const { event: name, data } = typeof event === 'string' ? { event: undefined, data: event } : event;
  const head = name === undefined ? '' : `event: ${name}\n`;
  return `${head}data: ${data.split('\n').join('\ndata: ')}\n\n`;
}

// ---------------------------------------------------------------- usage & errors

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
  completion_tokens_details?: { reasoning_tokens: number };
}

/** OpenAI usage object. `completion` already includes `reasoning`, as OpenAI counts it. */
export function makeUsage(prompt: number, completion: number, opts: { reasoning?: number; cached?: number } = {}): Usage {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: opts.cached ?? 0 },
    completion_tokens_details: { reasoning_tokens: opts.reasoning ?? 0 },
  };
}

export interface ErrorFields {
  type?: string;
  param?: string | null;
  code?: string | null;
}

/** OpenAI's error envelope. */
export function errorBody(message: string, fields: ErrorFields = {}) {
  return { error: { message, type: fields.type ?? 'invalid_request_error', param: fields.param ?? null, code: fields.code ?? null } };
}

/** An error reply with the `type`/`code` OpenAI uses for that status unless overridden. */
export function errorReply(status: number, message: string, fields: ErrorFields = {}): JsonReply {
  const defaults: ErrorFields =
    status === 429 ? { type: 'requests', code: 'rate_limit_exceeded' } : status >= 500 ? { type: 'server_error' } : {};
  return { status, json: errorBody(message, { ...defaults, ...fields }) };
}

// ---------------------------------------------------------------- chat completions

export const DEFAULT_TEXT = 'Hello from the mock upstream.';

export interface ToolCallSpec {
  id?: string;
  name: string;
  /** Object arguments are JSON-encoded; strings are sent verbatim (so tests can send broken JSON). */
  arguments: string | object;
}

export interface CompletionSpec {
  id?: string;
  model?: string;
  created?: number;
  /** Defaults to DEFAULT_TEXT, or null when toolCalls are given. */
  content?: string | null;
  toolCalls?: ToolCallSpec[];
  /** DeepSeek-style `reasoning_content` next to the answer. */
  reasoningContent?: string;
  /** Defaults to 'tool_calls' with toolCalls, else 'stop'. */
  finishReason?: string;
  /** null omits the field entirely, as some providers do. Defaults to makeUsage(10, 7). */
  usage?: Usage | null;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

function toolCallBody(call: ToolCallSpec, i: number) {
  const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
  return { id: call.id ?? `call_mock_${i + 1}`, type: 'function', function: { name: call.name, arguments: args } };
}

/** A non-streaming `chat.completion` body. */
export function chatCompletion(spec: CompletionSpec = {}) {
  const toolCalls = spec.toolCalls?.map(toolCallBody);
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: spec.content !== undefined ? spec.content : toolCalls ? null : DEFAULT_TEXT,
    refusal: null,
    annotations: [],
  };
  if (spec.reasoningContent !== undefined) message.reasoning_content = spec.reasoningContent;
  if (toolCalls) message.tool_calls = toolCalls;
  const body: Record<string, unknown> = {
    id: spec.id ?? 'chatcmpl-mock',
    object: 'chat.completion',
    created: spec.created ?? nowSeconds(),
    model: spec.model ?? 'gpt-4o-mini',
    choices: [{ index: 0, message, logprobs: null, finish_reason: spec.finishReason ?? (toolCalls ? 'tool_calls' : 'stop') }],
    service_tier: 'default',
    system_fingerprint: 'fp_mock',
  };
  if (spec.usage !== null) body.usage = spec.usage ?? makeUsage(10, 7);
  return body;
}

/**
 * Where usage appears in a stream:
 * - 'final-chunk': OpenAI with include_usage — every chunk has `usage: null`, then a `choices: []` chunk carries it.
 * - 'on-finish':   DeepSeek / Mistral — usage rides on the finish_reason chunk.
 * - 'running':     vLLM continuous_usage_stats — every chunk has running totals, then a final usage chunk.
 * - 'none':        OpenAI without include_usage — no usage field at all.
 */
export type UsageMode = 'final-chunk' | 'on-finish' | 'running' | 'none';

export interface ChunksSpec extends Omit<CompletionSpec, 'content' | 'reasoningContent'> {
  /** A string is split into word pieces; an array is used as the pieces. */
  content?: string | string[] | null;
  reasoningContent?: string | string[];
  usageMode?: UsageMode;
  /** Azure OpenAI opens with a chunk that has no choices, empty id/model and prompt_filter_results. */
  azurePrelude?: boolean;
}

export type Chunk = Record<string, unknown>;

const pieces = (text: string | string[]) => (Array.isArray(text) ? text : (text.match(/\s*\S+\s*$|\s*\S+/g) ?? [text]));
/** Tool arguments arrive in small fixed-size fragments, so reassembly gets exercised. */
const fragments = (text: string, size = 6) => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));

export const azurePreludeChunk = (): Chunk => {
  const safe = { filtered: false, severity: 'safe' };
  return {
    choices: [],
    created: 0,
    id: '',
    model: '',
    object: '',
    prompt_filter_results: [{ prompt_index: 0, content_filter_results: { hate: safe, self_harm: safe, sexual: safe, violence: safe } }],
  };
};

/** The deltas of a stream, in OpenAI's order: role, reasoning, content, tool calls, finish. */
function chunkDeltas(spec: ChunksSpec): Array<{ delta: Record<string, unknown>; finish?: string }> {
  const calls = spec.toolCalls?.map(toolCallBody) ?? [];
  const content = spec.content !== undefined ? spec.content : calls.length ? null : DEFAULT_TEXT;
  // OpenAI folds the first tool call's header into the role chunk.
  const header = (call: (typeof calls)[number], index: number) => ({
    index,
    id: call.id,
    type: 'function',
    function: { name: call.function.name, arguments: '' },
  });
  const first = calls[0];
  const role = first
    ? { role: 'assistant', content: null, tool_calls: [header(first, 0)], refusal: null }
    : { role: 'assistant', content: '', refusal: null };
  const deltas: Array<{ delta: Record<string, unknown>; finish?: string }> = [{ delta: role }];
  for (const piece of spec.reasoningContent === undefined ? [] : pieces(spec.reasoningContent)) deltas.push({ delta: { reasoning_content: piece } });
  for (const piece of content === null ? [] : pieces(content)) deltas.push({ delta: { content: piece } });
  calls.forEach((call, index) => {
    if (index > 0) deltas.push({ delta: { tool_calls: [header(call, index)] } });
    for (const arg of fragments(call.function.arguments)) deltas.push({ delta: { tool_calls: [{ index, function: { arguments: arg } }] } });
  });
  deltas.push({ delta: {}, finish: spec.finishReason ?? (calls.length ? 'tool_calls' : 'stop') });
  return deltas;
}

/** Running usage for chunk i of n (vLLM style): completion tokens grow to the total on the last chunk. */
function runningUsage(total: Usage, i: number, n: number): Usage {
  const completion = Math.round((total.completion_tokens * (i + 1)) / n);
  return { prompt_tokens: total.prompt_tokens, completion_tokens: completion, total_tokens: total.prompt_tokens + completion };
}

/** The `chat.completion.chunk` objects of a stream (no [DONE]; sseFromChunks adds it). */
export function chatChunks(spec: ChunksSpec = {}): Chunk[] {
  const mode = spec.usageMode ?? 'final-chunk';
  const usage = spec.usage ?? makeUsage(10, 7);
  const base = { id: spec.id ?? 'chatcmpl-mock', object: 'chat.completion.chunk', created: spec.created ?? nowSeconds(), model: spec.model ?? 'gpt-4o-mini', service_tier: 'default', system_fingerprint: 'fp_mock' };
  const deltas = chunkDeltas(spec);
  const chunks: Chunk[] = deltas.map(({ delta, finish }, i) => {
    const chunk: Chunk = { ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish ?? null }] };
    if (spec.usage === null || mode === 'none') return chunk;
    if (mode === 'final-chunk') chunk.usage = null;
    if (mode === 'on-finish') chunk.usage = finish ? usage : null;
    if (mode === 'running') chunk.usage = runningUsage(usage, i, deltas.length);
    return chunk;
  });
  if (spec.usage !== null && (mode === 'final-chunk' || mode === 'running')) chunks.push({ ...base, choices: [], usage });
  if (spec.azurePrelude) chunks.unshift(azurePreludeChunk());
  return chunks;
}

export interface SseOptions extends ReplyBase, StreamKnobs {
  /** Append `data: [DONE]` (default true). */
  done?: boolean;
}

/** Turns chunk objects (or raw data strings, passed through untouched) into an SSE reply. */
export function sseFromChunks(chunks: unknown[], opts: SseOptions = {}): SseReply {
  const { done = true, ...rest } = opts;
  const sse = chunks.map((c) => (typeof c === 'string' ? c : JSON.stringify(c)));
  return { ...rest, sse: done ? [...sse, '[DONE]'] : sse };
}

// ---------------------------------------------------------------- embeddings

/** OpenAI's `encoding_format: 'base64'`: the little-endian float32 bytes of the vector. */
export function encodeFloat32Base64(vector: number[]): string {
  const buf = Buffer.alloc(vector.length * 4);
  vector.forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return buf.toString('base64');
}

export function decodeFloat32Base64(text: string): number[] {
  const buf = Buffer.from(text, 'base64');
  return Array.from({ length: buf.length / 4 }, (_, i) => buf.readFloatLE(i * 4));
}

/** An embeddings `list` body. */
export function embeddingList(vectors: number[][], opts: { model?: string; promptTokens?: number; base64?: boolean } = {}) {
  const tokens = opts.promptTokens ?? vectors.length;
  return {
    object: 'list',
    data: vectors.map((v, index) => ({ object: 'embedding', index, embedding: opts.base64 ? encodeFloat32Base64(v) : v })),
    model: opts.model ?? 'text-embedding-3-small',
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
