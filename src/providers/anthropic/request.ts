// Builds Anthropic Messages API requests ({base_url}/v1/messages) from the OpenAI chat-completions body.
//
// The convention's fields (CHAT_CONVENTION_FIELDS), decided one by one:
//   mapped:    model, messages (system/developer → `system`, tool → tool_result), max_completion_tokens and
//              max_tokens → max_tokens (else the model's max_output_tokens: Anthropic requires it),
//              stop → stop_sequences, stream, tools, tool_choice, parallel_tool_calls →
//              disable_parallel_tool_use, reasoning_effort → thinking.budget_tokens (Claude ≥ 4.6: adaptive
//              thinking + output_config.effort, ADR 0046), response_format → the
//              json_response tool, user and safety_identifier → metadata.user_id (both are the end-user id
//              a provider uses for abuse detection; safety_identifier, the newer, wins)
//   forwarded: temperature, top_p, metadata.user_id (the one key Anthropic's metadata defines; an
//              OpenAI-style metadata's other keys would make Anthropic answer 400, so they are dropped),
//              service_tier when 'auto' or 'standard_only' (values Anthropic defines; OpenAI's other tiers
//              are dropped)
//   dropped:   audio, frequency_penalty, function_call, functions, logit_bias, logprobs, modalities,
//              moderation, n, prediction, presence_penalty, prompt_cache_key, prompt_cache_options,
//              prompt_cache_retention, seed, store, stream_options, top_logprobs, verbosity, web_search_options
// Every field outside the convention is Anthropic's own (thinking, top_k, stop_sequences, container,
// mcp_servers, context_management, ...) and is forwarded unchanged; it wins over a translated field that
// sets the same key (a native `thinking` beats reasoning_effort, native `stop_sequences` beats `stop`).
import { isJsonObject } from '../../json-object.js';
import { nativeFields } from '../convention-fields.js';
import { thinkingBudget } from '../reasoning-budget.js';
import type { ChatRequestBody, TranslatedRequest, UpstreamTarget } from '../types.js';
import { adaptiveEffort, adaptiveThinking, takesAdaptiveThinking } from './adaptive-thinking.js';
import { convertConversation } from './messages.js';
import { convertTools } from './tools.js';

export const ANTHROPIC_VERSION = '2023-06-01';

const DROPPED_FIELDS = [
  'audio',
  'frequency_penalty',
  'function_call',
  'functions',
  'logit_bias',
  'logprobs',
  'modalities',
  'moderation',
  'n',
  'prediction',
  'presence_penalty',
  'prompt_cache_key',
  'prompt_cache_options',
  'prompt_cache_retention',
  'seed',
  'store',
  'stream_options',
  'top_logprobs',
  'verbosity',
  'web_search_options',
] as const;

const ANTHROPIC_SERVICE_TIERS = new Set(['auto', 'standard_only']);

/** Used only when the model has no max_output_tokens configured (chat models normally do). */
const FALLBACK_MAX_TOKENS = 4096;

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function positiveInteger(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

function outputLimit(body: ChatRequestBody, target: UpstreamTarget): number {
  return positiveInteger(body.max_completion_tokens) ?? positiveInteger(body.max_tokens) ?? target.maxOutputTokens ?? FALLBACK_MAX_TOKENS;
}

function stopSequences(stop: unknown): string[] | undefined {
  const list = typeof stop === 'string' ? [stop] : Array.isArray(stop) ? stop.filter((s): s is string => typeof s === 'string') : [];
  return list.length > 0 ? list : undefined;
}

/** Anthropic's metadata holds only user_id; the client's own metadata.user_id wins over user/safety_identifier. */
function metadata(body: ChatRequestBody, dropped: Set<string>): Record<string, unknown> | undefined {
  const own = isJsonObject(body.metadata) ? body.metadata : {};
  if (present(body.metadata) && !isJsonObject(body.metadata)) dropped.add('metadata');
  for (const key of Object.keys(own)) if (key !== 'user_id') dropped.add(`metadata.${key}`);
  const userId = [own.user_id, body.safety_identifier, body.user].find((v) => typeof v === 'string' && v !== '');
  return userId === undefined ? undefined : { user_id: userId };
}

/**
 * Anthropic rejects thinking when the assistant turn being continued called tools without a thinking
 * block first. Clients that do not echo `thinking_blocks` would always hit that error with a gateway-
 * chosen budget, so the gateway leaves thinking off for them instead.
 */
export function continuesToolUseWithoutThinking(messages: readonly Record<string, unknown>[]): boolean {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== 'assistant') continue;
    const calledTools = Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
    return calledTools && !(Array.isArray(message.thinking_blocks) && message.thinking_blocks.length > 0);
  }
  return false;
}

/** The thinking the gateway turns on for reasoning_effort: a token budget, or adaptive with an effort (Claude ≥ 4.6). */
type GatewayThinking = { budget: number } | { effort: string };

function gatewayThinking(body: ChatRequestBody, target: UpstreamTarget, nativeThinking: unknown, maxTokens: number, dropped: Set<string>): GatewayThinking | undefined {
  if (nativeThinking !== undefined) {
    if (present(body.reasoning_effort)) dropped.add('reasoning_effort');
    return undefined;
  }
  let thinking: GatewayThinking | undefined;
  if (takesAdaptiveThinking(target.upstreamModel)) {
    const effort = adaptiveEffort(body.reasoning_effort);
    if (effort !== undefined) thinking = { effort };
  } else {
    const budget = thinkingBudget(body.reasoning_effort, maxTokens);
    if (budget !== undefined) thinking = { budget };
  }
  if (thinking === undefined || !continuesToolUseWithoutThinking(body.messages)) return thinking;
  dropped.add('reasoning_effort');
  return undefined;
}

/** A budget, or adaptive thinking with summarized text (adaptive-thinking.ts says why). */
function thinkingField(thinking: GatewayThinking): Record<string, unknown> {
  return 'budget' in thinking ? { type: 'enabled', budget_tokens: thinking.budget } : adaptiveThinking();
}

function headers(stream: boolean): Record<string, string> {
  return { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json', 'anthropic-version': ANTHROPIC_VERSION };
}

/** Throws GatewayError('invalid_request') when tool-call arguments in the history are not a JSON object. */
export function buildAnthropicChatRequest(body: ChatRequestBody, target: UpstreamTarget): TranslatedRequest {
  const dropped = new Set<string>();
  const native = nativeFields(body);
  const maxTokens = outputLimit(body, target);
  const gateway = gatewayThinking(body, target, native.thinking, maxTokens, dropped);
  const thinkingOn = gateway !== undefined || (isJsonObject(native.thinking) && native.thinking.type !== 'disabled');

  const { system, messages } = convertConversation(body.messages, dropped);
  const tooling = convertTools(body, thinkingOn, dropped);
  if (tooling.instruction) system.push({ type: 'text', text: tooling.instruction });

  const out: Record<string, unknown> = { model: target.upstreamModel, max_tokens: maxTokens };
  if (system.length > 0) out.system = system;
  out.messages = messages;
  if (tooling.tools.length > 0) out.tools = tooling.tools;
  if (tooling.toolChoice) out.tool_choice = tooling.toolChoice;
  if (gateway !== undefined) out.thinking = thinkingField(gateway);
  if (gateway !== undefined && 'effort' in gateway) out.output_config = { effort: gateway.effort };
  if (present(body.temperature)) {
    // Anthropic rejects temperature (and top_k) with thinking; the client did not ask for thinking by
    // name, so the gateway's own choice must not turn its request into an error.
    if (gateway === undefined) out.temperature = body.temperature;
    else dropped.add('temperature');
  }
  if (present(body.top_p)) out.top_p = body.top_p;
  const stop = stopSequences(body.stop);
  if (stop) out.stop_sequences = stop;
  const meta = metadata(body, dropped);
  if (meta) out.metadata = meta;
  if (present(body.service_tier)) {
    if (typeof body.service_tier === 'string' && ANTHROPIC_SERVICE_TIERS.has(body.service_tier)) out.service_tier = body.service_tier;
    else dropped.add('service_tier');
  }
  for (const field of DROPPED_FIELDS) if (present(body[field])) dropped.add(field);

  for (const [key, value] of Object.entries(native)) {
    if (key === 'top_k' && gateway !== undefined) dropped.add('top_k');
    // A client's own output_config (format, ...) keeps the gateway's effort beside its keys; its own effort wins.
    else if (key === 'output_config' && isJsonObject(value) && isJsonObject(out.output_config)) out.output_config = { ...out.output_config, ...value };
    else out[key] = value;
  }
  const stream = body.stream === true;
  if (stream) out.stream = true;
  return {
    method: 'POST',
    path: `${target.provider.basePath}/v1/messages`,
    headers: headers(stream),
    body: JSON.stringify(out),
    ...(dropped.size > 0 ? { dropped: [...dropped] } : {}),
  };
}
