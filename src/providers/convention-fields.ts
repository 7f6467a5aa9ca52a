// The request fields of the OpenAI chat-completions convention (CreateChatCompletionRequest in the
// OpenAPI document). Adapters for other APIs translate or drop these; any other field a client sends is
// taken to be the upstream's own and forwarded as it is.

export const CHAT_CONVENTION_FIELDS: ReadonlySet<string> = new Set([
  'messages',
  'model',
  'audio',
  'frequency_penalty',
  'function_call',
  'functions',
  'logit_bias',
  'logprobs',
  'max_completion_tokens',
  'max_tokens',
  'metadata',
  'modalities',
  'moderation',
  'n',
  'parallel_tool_calls',
  'prediction',
  'presence_penalty',
  'prompt_cache_key',
  'prompt_cache_options',
  'prompt_cache_retention',
  'reasoning_effort',
  'response_format',
  'safety_identifier',
  'seed',
  'service_tier',
  'stop',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'user',
  'verbosity',
  'web_search_options',
]);

/** Copies the fields that are not part of the convention (the upstream's native ones), except `skip`. */
export function nativeFields(body: Record<string, unknown>, skip: ReadonlySet<string> = new Set()): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (!CHAT_CONVENTION_FIELDS.has(key) && !skip.has(key)) out[key] = value;
  }
  return out;
}
