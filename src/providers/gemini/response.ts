// Gemini generateContent responses → OpenAI chat completions (one choice per candidate).
import { randomUUID } from 'node:crypto';
import { isJsonObject, type JsonObject } from '../../json-object.js';
import { malformed, UpstreamFailureError, type ParsedResponse, type UpstreamTarget } from '../types.js';
import { readGeminiErrorObject } from './errors.js';
import { toOpenAILogprobs } from './logprobs.js';
import { openAIToolCall } from './tool-calls.js';
import { readGeminiUsage } from './usage.js';

const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

/**
 * Gemini's finishReason → the convention's. A reply that called functions ends in 'tool_calls' (Gemini
 * says STOP); a truncated or filtered one keeps 'length' / 'content_filter', which the client must see.
 */
export function mapFinishReason(reason: unknown, calledTools: boolean): string {
  if (reason === 'MAX_TOKENS') return 'length';
  if (typeof reason === 'string' && FILTERED.has(reason)) return 'content_filter';
  return calledTools ? 'tool_calls' : 'stop';
}

/** 'chatcmpl-' + Gemini's responseId, so clients that look at the prefix are at home. */
export function completionId(responseId: unknown): string {
  return `chatcmpl-${typeof responseId === 'string' && responseId !== '' ? responseId : randomUUID().replace(/-/g, '')}`;
}

export function partsOf(candidate: JsonObject): JsonObject[] {
  const content = candidate.content;
  return isJsonObject(content) && Array.isArray(content.parts) ? content.parts.filter(isJsonObject) : [];
}

function toChoice(candidate: JsonObject, position: number): JsonObject {
  let content: string | null = null;
  let reasoning = '';
  const toolCalls: JsonObject[] = [];
  for (const part of partsOf(candidate)) {
    if (typeof part.text === 'string') {
      if (part.thought === true) reasoning += part.text;
      else content = (content ?? '') + part.text;
    } else if (isJsonObject(part.functionCall) && typeof part.functionCall.name === 'string') {
      const args = part.functionCall.args ?? {};
      toolCalls.push(openAIToolCall(part.functionCall.name, JSON.stringify(args), part.thoughtSignature));
    }
  }
  const message: JsonObject = { role: 'assistant', content, refusal: null };
  if (reasoning !== '') message.reasoning_content = reasoning;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    index: typeof candidate.index === 'number' ? candidate.index : position,
    message,
    logprobs: toOpenAILogprobs(candidate.logprobsResult),
    finish_reason: mapFinishReason(candidate.finishReason, toolCalls.length > 0),
  };
}

export function parseGeminiChatResponse(json: unknown, target: UpstreamTarget): ParsedResponse {
  if (!isJsonObject(json)) throw malformed('generateContent response');
  if (json.error !== undefined) throw new UpstreamFailureError(readGeminiErrorObject(json.error, 502));
  const candidates = Array.isArray(json.candidates) ? json.candidates.filter(isJsonObject) : [];
  const choices = candidates.map(toChoice);
  if (choices.length === 0) {
    // No candidates: the prompt itself was blocked (promptFeedback.blockReason), or nothing came back.
    const feedback = isJsonObject(json.promptFeedback) ? json.promptFeedback : {};
    const blocked = typeof feedback.blockReason === 'string';
    choices.push({
      index: 0,
      message: { role: 'assistant', content: null, refusal: null },
      logprobs: null,
      finish_reason: blocked ? 'content_filter' : 'stop',
    });
  }
  const usage = readGeminiUsage(json.usageMetadata);
  const body: JsonObject = {
    id: completionId(json.responseId),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: target.clientModel,
    choices,
  };
  if (usage) body.usage = usage.openai;
  return { body, usage };
}
