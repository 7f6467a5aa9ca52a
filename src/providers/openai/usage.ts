// Reads OpenAI-style `usage` objects (OpenAI, Azure, DeepSeek, Mistral, Groq, xAI, vLLM) into billable counts.
import { isJsonObject, type JsonObject } from '../../json-object.js';
import type { ReportedUsage } from '../types.js';
import type { ModifierReport } from '../usage-report.js';

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/**
 * Returns null when the object carries no usable counts (the request is then settled as estimated).
 * Reasoning tokens are inside completion_tokens by the OpenAI convention; some servers (xAI) report them
 * outside it, which shows as total_tokens > prompt + completion — then output = total − prompt, and the
 * client's copy is normalised to the convention.
 */
export function readOpenAIUsage(raw: unknown): ReportedUsage | null {
  if (!isJsonObject(raw)) return null;
  const prompt = count(raw.prompt_tokens);
  const completion = count(raw.completion_tokens) ?? (prompt !== undefined && raw.completion_tokens === undefined ? 0 : undefined);
  if (prompt === undefined || completion === undefined) return null;
  const total = count(raw.total_tokens);
  const output = total !== undefined && total > prompt + completion ? total - prompt : completion;
  const promptDetails = isJsonObject(raw.prompt_tokens_details) ? raw.prompt_tokens_details : undefined;
  const completionDetails = isJsonObject(raw.completion_tokens_details) ? raw.completion_tokens_details : undefined;
  const cached = count(promptDetails?.cached_tokens) ?? count(raw.prompt_cache_hit_tokens) ?? 0;
  const reasoning = count(completionDetails?.reasoning_tokens) ?? 0;
  const openai: JsonObject = { ...raw, completion_tokens: output, total_tokens: prompt + output };
  // Servers that bill prompt-cache writes (OpenRouter and other proxies of Anthropic models) report them here.
  const cacheWrite = count(promptDetails?.cache_write_tokens);
  const cachedInput = Math.min(cached, prompt);
  const tokens = { input: prompt, cachedInput, output, reasoning };
  return { tokens: !cacheWrite ? tokens : { ...tokens, cacheWrite: Math.min(cacheWrite, prompt - cachedInput) }, openai };
}

/**
 * The price modifiers an OpenAI-style answer reports on its envelope (a chat completion, a stream chunk,
 * a Responses `response` object), over what `holder.modifiers` holds: `service_tier` (`flex`, `priority`,
 * `default`, ...) and the `model` that answered. Read before the envelope's model is replaced by the
 * client's. An empty `model` (Azure's prelude chunk) is no report.
 */
export function mergeOpenAIModifiers(holder: { modifiers?: ModifierReport }, envelope: JsonObject): void {
  if (typeof envelope.service_tier === 'string' && envelope.service_tier !== '') (holder.modifiers ??= {}).tier = envelope.service_tier;
  if (typeof envelope.model === 'string' && envelope.model !== '') (holder.modifiers ??= {}).servedModel = envelope.model;
}
