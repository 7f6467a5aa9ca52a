// Mock of Anthropic's Messages API (POST /v1/messages) for end-to-end tests, on the shared server core of
// mock-upstream.ts (recording, handle(), fault combinators). Replies are derived from the request and sent
// in Anthropic's own wire format, shaped like the recordings in test/fixtures/upstream/anthropic*/: a JSON
// Message, or a stream framed `event: <type>\ndata: <json>\n\n` (message_start, content_block_start / ping /
// *_delta / content_block_stop, message_delta with cumulative usage, message_stop; no [DONE]).
import { JSON_MODE_TEXT, TOOL_ARGUMENTS, toolResultText } from './mock-defaults.js';
import { startMockServer, type JsonReply, type MockReply, type MockServer, type ReceivedRequest, type SseEvent, type SseReply } from './mock-upstream.js';

export const ANTHROPIC_MOCK_KEY = 'sk-ant-mock-secret';
export const ANTHROPIC_VERSION = '2023-06-01';
/** A version the API knows: 2023-06-01 (what gateways send by default) or a later dated one (the SDK's own, e.g. 1.x's 2026-10-21). */
const knownVersion = (value: unknown): boolean => typeof value === 'string' && /^\d{4}-\d\d-\d\d$/.test(value) && value >= ANTHROPIC_VERSION;
export const ANTHROPIC_TEXT = 'Hello from the mock Anthropic server.';
export const ANTHROPIC_THINKING = 'The user wants a brief answer. I will keep it short.';

/** The signature the mock gives a thinking block, and checks when the block is sent back. */
export const signatureFor = (thinking: string): string => Buffer.from(`mock-signature:${thinking}`).toString('base64');

export interface AnthropicCacheTokens {
  read?: number;
  creation?: number;
  /** Of `creation`, the 1-hour writes: reported as usage.cache_creation's per-lifetime breakdown. */
  creation1h?: number;
}

/**
 * Headers every reply carries, as Anthropic's do: its rate limits (which describe the gateway's account)
 * and its request id. A gateway must never hand them to its own clients.
 */
export const ANTHROPIC_UPSTREAM_HEADERS: Readonly<Record<string, string>> = {
  'anthropic-ratelimit-requests-limit': '4000',
  'anthropic-ratelimit-requests-remaining': '3999',
  'anthropic-ratelimit-tokens-remaining': '1999000',
  'anthropic-ratelimit-input-tokens-reset': '2030-01-01T00:00:00Z',
  'x-ratelimit-limit-requests': '4000',
  'request-id': 'req_upstream_011CMockRequestId',
};

/** What the mock answers to POST /v1/messages/count_tokens: input_tokens = 1000 + messages.length. */
export const anthropicCountFor = (body: unknown): number => 1000 + (isObj(body) && Array.isArray(body.messages) ? body.messages.length : 0);

export interface MockAnthropic extends MockServer {
  /** The provider's base_url: the origin (the gateway appends /v1/messages). */
  url: string;
  /** The x-api-key the mock accepts; set another value to make the gateway's key wrong. */
  apiKey: string;
  /** Prompt-cache tokens reported by later replies (cleared by reset()). */
  cache: AnthropicCacheTokens;
  /**
   * Answer in text even when the request offers tools (reset() clears it). By default the model calls the
   * first tool, which keeps a coding agent looping; in text, its turn ends after one request.
   */
  answerInText: boolean;
}

/** How the model answers: see MockAnthropic.answerInText. */
export interface AnthropicReplyStyle {
  answerInText?: boolean;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

// ---------------------------------------------------------------- usage

/** The four counters of an Anthropic usage object. */
export interface AnthropicUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

const thinkingOn = (b: Obj): boolean => isObj(b.thinking) && (b.thinking.type === 'enabled' || b.thinking.type === 'adaptive');

/**
 * The model's version as the mock reads it (its own parse, independent of the gateway's): claude-opus-4-7 →
 * 4.7, claude-sonnet-4-5-20250929 → 4.5, claude-opus-4-20250514 → 4.0; undefined for other ids.
 */
function modelVersion(model: unknown): number | undefined {
  const match = typeof model === 'string' ? /^claude-[a-z]+-(\d+)(?:-(\d{1,2}))?(?:-|$)/.exec(model) : null;
  return match ? Number(match[1]) + Number(match[2] ?? 0) / 10 : undefined;
}

/** What the API says to thinking it does not take: 4.7+ take only adaptive; adaptive needs 4.6+. */
function unsupportedThinking(b: Obj): string | undefined {
  if (!isObj(b.thinking)) return undefined;
  const version = modelVersion(b.model);
  if (b.thinking.type === 'enabled' && version !== undefined && version >= 4.7) {
    return '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.';
  }
  if (b.thinking.type === 'adaptive' && (version === undefined || version < 4.6)) return 'adaptive thinking is not supported on this model';
  if (b.thinking.type === 'adaptive' && b.thinking.budget_tokens !== undefined) return 'thinking.adaptive.budget_tokens: Extra inputs are not permitted';
  return undefined;
}

/**
 * The usage the mock reports, so tests can price it:
 *   input_tokens  = 20 + messages.length;  cache_* = what `cache` says (0 by default)
 *   output_tokens = 9, + 30 when thinking is on (enabled or adaptive)
 */
export function anthropicUsageFor(body: unknown, cache: AnthropicCacheTokens = {}): AnthropicUsage {
  const b = isObj(body) ? body : {};
  const creation = cache.creation ?? 0;
  return {
    input_tokens: 20 + (Array.isArray(b.messages) ? b.messages.length : 0),
    cache_creation_input_tokens: creation,
    cache_read_input_tokens: cache.read ?? 0,
    output_tokens: 9 + (thinkingOn(b) ? 30 : 0),
    ...(cache.creation1h !== undefined ? { cache_creation: { ephemeral_5m_input_tokens: creation - cache.creation1h, ephemeral_1h_input_tokens: cache.creation1h } } : {}),
  };
}

// ---------------------------------------------------------------- errors

let sequence = 0;
const nextId = (prefix: string) => `${prefix}_mock${String(++sequence).padStart(6, '0')}`;

/** Anthropic's error body: {"type":"error","error":{type, message},"request_id"}. */
export function anthropicError(status: number, type: string, message: string, headers?: Record<string, string>): JsonReply {
  return { status, json: { type: 'error', error: { type, message }, request_id: nextId('req') }, ...(headers ? { headers } : {}) };
}

/** An `event: error` frame, as Anthropic sends inside a 200 stream (e.g. overloaded_error). */
export const anthropicErrorEvent = (type: string, message: string): SseEvent => ({
  event: 'error',
  data: JSON.stringify({ type: 'error', error: { type, message } }),
});

// ---------------------------------------------------------------- what the model "says"

type Block =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Obj };

interface Plan {
  blocks: Block[];
  stopReason: 'end_turn' | 'tool_use';
}

const lastOf = (b: Obj, role: string): Obj | undefined => {
  const messages = Array.isArray(b.messages) ? (b.messages as unknown[]) : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (isObj(m) && m.role === role) return m;
  }
  return undefined;
};
const blocksOf = (message: Obj | undefined): Obj[] => (message && Array.isArray(message.content) ? message.content.filter(isObj) : []);
const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((c: unknown) => (isObj(c) && typeof c.text === 'string' ? c.text : '')).join('') : '';

/**
 * The tool the reply calls: the forced one, else the first tool; none with tool_choice none, after a tool
 * result, or when the style says to answer in text (unless a tool is forced).
 */
function chosenTool(b: Obj, answersToolResult: boolean, style: AnthropicReplyStyle): { name: string; forced: boolean } | undefined {
  const tools = Array.isArray(b.tools) ? b.tools.filter(isObj) : [];
  const choice = isObj(b.tool_choice) ? b.tool_choice : { type: 'auto' };
  if (tools.length === 0 || choice.type === 'none') return undefined;
  if (style.answerInText && choice.type !== 'tool' && choice.type !== 'any') return undefined;
  if (choice.type === 'tool' && typeof choice.name === 'string') return { name: choice.name, forced: true };
  if (answersToolResult && choice.type !== 'any') return undefined;
  const first = tools[0]!;
  return { name: typeof first.name === 'string' ? first.name : 'tool', forced: choice.type === 'any' };
}

function planReply(b: Obj, style: AnthropicReplyStyle = {}): Plan {
  const results = blocksOf(lastOf(b, 'user')).filter((block) => block.type === 'tool_result');
  const tool = chosenTool(b, results.length > 0, style);
  const blocks: Block[] = [];
  if (thinkingOn(b)) blocks.push({ type: 'thinking', thinking: ANTHROPIC_THINKING, signature: signatureFor(ANTHROPIC_THINKING) });
  if (!tool) {
    blocks.push({ type: 'text', text: results.length > 0 ? toolResultText(results.map((r) => textOf(r.content)).join('\n')) : ANTHROPIC_TEXT });
    return { blocks, stopReason: 'end_turn' };
  }
  // With tool_choice any/tool Anthropic prefills the call: no text before it.
  if (!tool.forced) blocks.push({ type: 'text', text: `I'll call ${tool.name}.` });
  const input = JSON.parse(tool.name === 'json_response' ? JSON_MODE_TEXT : TOOL_ARGUMENTS) as Obj;
  blocks.push({ type: 'tool_use', id: nextId('toolu'), name: tool.name, input });
  return { blocks, stopReason: 'tool_use' };
}

// ---------------------------------------------------------------- request checks (what the real API refuses)

/** The message of the 400 the real API would answer, or undefined. */
function invalidRequest(b: Obj): string | undefined {
  if (typeof b.model !== 'string' || b.model === '') return 'model: Field required';
  if (!Number.isInteger(b.max_tokens)) return 'max_tokens: Field required';
  if (!Array.isArray(b.messages) || b.messages.length === 0) return 'messages: Field required';
  const messages = b.messages.filter(isObj);
  const thinking = unsupportedThinking(b);
  if (thinking) return thinking;
  const effort = isObj(b.output_config) ? b.output_config.effort : undefined;
  if (effort !== undefined && !['low', 'medium', 'high', 'max'].includes(String(effort))) return `output_config.effort: Input should be 'low', 'medium', 'high' or 'max'`;
  if (thinkingOn(b)) {
    const budget = (b.thinking as Obj).budget_tokens;
    const adaptive = (b.thinking as Obj).type === 'adaptive';
    if (!adaptive && (typeof budget !== 'number' || budget < 1024)) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
    if (!adaptive && (b.max_tokens as number) <= (budget as number)) return '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size';
    if (isObj(b.tool_choice) && (b.tool_choice.type === 'any' || b.tool_choice.type === 'tool')) return 'Thinking may not be enabled when tool_choice forces tool use.';
    if (b.temperature !== undefined && b.temperature !== 1) return '`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility';
    const lastAssistant = lastOf(b, 'assistant');
    const blocks = blocksOf(lastAssistant);
    if (blocks.some((block) => block.type === 'tool_use') && blocks[0]?.type !== 'thinking' && blocks[0]?.type !== 'redacted_thinking') {
      return `messages.${messages.indexOf(lastAssistant!)}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(blocks[0]?.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks).`;
    }
  }
  for (const [i, message] of messages.entries()) {
    for (const [j, block] of blocksOf(message).entries()) {
      if (block.type === 'thinking' && block.signature !== signatureFor(String(block.thinking))) return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
      if (block.type === 'tool_result') {
        const previous = i > 0 ? blocksOf(messages[i - 1]) : [];
        if (!previous.some((p) => p.type === 'tool_use' && p.id === block.tool_use_id)) {
          return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
        }
      }
    }
  }
  return undefined;
}

// ---------------------------------------------------------------- replies

function messageBody(b: Obj, plan: Plan, usage: AnthropicUsage, id: string): Obj {
  return {
    id,
    type: 'message',
    role: 'assistant',
    model: b.model,
    content: plan.blocks,
    stop_reason: plan.stopReason,
    stop_sequence: null,
    usage: { ...usage, service_tier: 'standard' },
  };
}

const words = (text: string) => text.match(/\S+\s*/g) ?? [text];
const fragments = (text: string, size = 7) => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));
const frame = (data: Obj): SseEvent => ({ event: String(data.type), data: JSON.stringify(data) });

/** The events of a streamed reply, in Anthropic's order (message_start … message_stop). */
export function anthropicStreamEvents(b: Obj, cache: AnthropicCacheTokens = {}, style: AnthropicReplyStyle = {}): SseEvent[] {
  const plan = planReply(b, style);
  const usage = anthropicUsageFor(b, cache);
  const events: SseEvent[] = [
    frame({ type: 'message_start', message: { ...messageBody(b, { ...plan, blocks: [] }, { ...usage, output_tokens: 1 }, nextId('msg')), stop_reason: null } }),
  ];
  plan.blocks.forEach((block, index) => {
    const start = (contentBlock: Obj) => {
      events.push(frame({ type: 'content_block_start', index, content_block: contentBlock }));
      if (index === 0) events.push(frame({ type: 'ping' })); // where the recordings have it
    };
    const delta = (d: Obj) => events.push(frame({ type: 'content_block_delta', index, delta: d }));
    if (block.type === 'thinking') {
      start({ type: 'thinking', thinking: '', signature: '' });
      for (const piece of words(block.thinking)) delta({ type: 'thinking_delta', thinking: piece });
      delta({ type: 'signature_delta', signature: block.signature });
    } else if (block.type === 'text') {
      start({ type: 'text', text: '' });
      for (const piece of words(block.text)) delta({ type: 'text_delta', text: piece });
    } else {
      start({ type: 'tool_use', id: block.id, name: block.name, input: {} });
      for (const piece of ['', ...fragments(JSON.stringify(block.input))]) delta({ type: 'input_json_delta', partial_json: piece });
    }
    events.push(frame({ type: 'content_block_stop', index }));
  });
  events.push(frame({ type: 'message_delta', delta: { stop_reason: plan.stopReason, stop_sequence: null }, usage }));
  events.push(frame({ type: 'message_stop' }));
  return events;
}

/** The mock's default answer to any request (headers checked against `apiKey`). */
export function anthropicReply(req: ReceivedRequest, apiKey = ANTHROPIC_MOCK_KEY, cache: AnthropicCacheTokens = {}, style: AnthropicReplyStyle = {}): MockReply {
  const reply = answerOf(req, apiKey, cache, style);
  return { ...reply, headers: { ...ANTHROPIC_UPSTREAM_HEADERS, ...reply.headers } };
}

function answerOf(req: ReceivedRequest, apiKey: string, cache: AnthropicCacheTokens, style: AnthropicReplyStyle): MockReply {
  const counting = req.path === '/v1/messages/count_tokens';
  if (req.method !== 'POST' || (req.path !== '/v1/messages' && !counting)) return anthropicError(404, 'not_found_error', `${req.method} ${req.path} not found`);
  if (req.headers['x-api-key'] !== apiKey) return anthropicError(401, 'authentication_error', 'invalid x-api-key');
  if (!knownVersion(req.headers['anthropic-version'])) return anthropicError(401, 'authentication_error', 'anthropic-version: missing or unsupported version');
  if (!isObj(req.body)) return anthropicError(400, 'invalid_request_error', 'There was an error parsing the body of your request.');
  const b = req.body;
  if (counting) {
    if (typeof b.model !== 'string' || !Array.isArray(b.messages)) return anthropicError(400, 'invalid_request_error', 'messages: Field required');
    return { json: { input_tokens: anthropicCountFor(b) } };
  }
  const problem = invalidRequest(b);
  if (problem) return anthropicError(400, 'invalid_request_error', problem);
  if (b.stream === true) return { sse: anthropicStreamEvents(b, cache, style) } satisfies SseReply;
  return { json: messageBody(b, planReply(b, style), anthropicUsageFor(b, cache), nextId('msg')) };
}

/** The mock's own default for a request, as its settings stand (for a handler that looks at it or changes part of it). */
export function anthropicDefault(mock: MockAnthropic, req: ReceivedRequest): MockReply {
  return anthropicReply(req, mock.apiKey, mock.cache, { answerInText: mock.answerInText });
}

export async function startMockAnthropic(opts: { port?: number; host?: string } = {}): Promise<MockAnthropic> {
  const settings = { apiKey: ANTHROPIC_MOCK_KEY, cache: {} as AnthropicCacheTokens, answerInText: false };
  const server = await startMockServer({ ...opts, defaultReply: (req) => anthropicReply(req, settings.apiKey, settings.cache, { answerInText: settings.answerInText }) });
  const mock: MockAnthropic = Object.assign(settings, server, {
    url: server.origin,
    reset() {
      server.reset();
      settings.apiKey = ANTHROPIC_MOCK_KEY;
      settings.cache = {};
      settings.answerInText = false;
    },
  });
  return mock;
}
