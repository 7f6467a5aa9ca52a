// Gemini streamGenerateContent?alt=sse events → OpenAI chat.completion.chunks: one chunk per event at most,
// usage kept aside (it is cumulative on every event: the last report wins), tool calls given ids and indexes.
import { isJsonObject, type JsonObject } from '../../json-object.js';
import type { SseEvent } from '../framing/sse.js';
import { parseStreamEvent, UpstreamFailureError, type ChatStreamTranslator, type ReportedUsage, type UpstreamTarget } from '../types.js';
import { readGeminiErrorObject } from './errors.js';
import { toOpenAILogprobs } from './logprobs.js';
import { PartialArgs } from './partial-args.js';
import { completionId, mapFinishReason, partsOf } from './response.js';
import { openAIToolCall } from './tool-calls.js';
import { readGeminiUsage } from './usage.js';

/** A function call whose arguments arrive as partialArgs over several events. */
interface OpenCall {
  readonly index: number;
  readonly args: PartialArgs;
}

/** Per candidate (choice): what the client has been sent so far. */
interface ChoiceState {
  started: boolean;
  finished: boolean;
  toolCalls: number;
  open: OpenCall | undefined;
}

/** The tool-call deltas of one chunk, one entry per index (a call opened and closed in one event merges). */
class ToolCallDeltas {
  private readonly byIndex = new Map<number, JsonObject>();

  add(index: number, call: JsonObject): void {
    const existing = this.byIndex.get(index);
    const fn = existing?.function;
    const more = isJsonObject(call.function) ? call.function.arguments : undefined;
    if (isJsonObject(fn) && typeof more === 'string') fn.arguments = `${String(fn.arguments ?? '')}${more}`;
    else this.byIndex.set(index, call);
  }

  list(): JsonObject[] {
    return [...this.byIndex.values()];
  }
}

export class GeminiChatStreamTranslator implements ChatStreamTranslator {
  finished = false;
  usage: ReportedUsage | null = null;
  id = '';
  readonly created = Math.floor(Date.now() / 1000);
  private readonly choices = new Map<number, ChoiceState>();

  constructor(private readonly target: UpstreamTarget) {}

  onEvent(event: SseEvent): JsonObject | null {
    const payload = parseStreamEvent(event);
    if (payload.error !== undefined) throw new UpstreamFailureError(readGeminiErrorObject(payload.error, undefined));
    if (this.id === '') this.id = completionId(payload.responseId);
    // Events holding only {trafficType} carry no counts and must not erase the last report.
    this.usage = readGeminiUsage(payload.usageMetadata) ?? this.usage;

    const candidates = Array.isArray(payload.candidates) ? payload.candidates.filter(isJsonObject) : [];
    const choices: JsonObject[] = [];
    candidates.forEach((candidate, position) => {
      const choice = this.translate(candidate, position);
      if (choice) choices.push(choice);
    });
    const feedback = payload.promptFeedback;
    if (candidates.length === 0 && isJsonObject(feedback) && typeof feedback.blockReason === 'string') {
      // The prompt was blocked: no candidate will follow.
      choices.push(this.choice(0, this.state(0), {}, 'content_filter', null));
    }
    this.finished = this.choices.size > 0 && [...this.choices.values()].every((state) => state.finished);
    if (choices.length === 0) return null;
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.target.clientModel, choices };
  }

  private state(index: number): ChoiceState {
    let state = this.choices.get(index);
    if (!state) this.choices.set(index, (state = { started: false, finished: false, toolCalls: 0, open: undefined }));
    return state;
  }

  private translate(candidate: JsonObject, position: number): JsonObject | undefined {
    const index = typeof candidate.index === 'number' ? candidate.index : position;
    const state = this.state(index);
    const delta: JsonObject = {};
    let content = '';
    let reasoning = '';
    const calls = new ToolCallDeltas();
    for (const part of partsOf(candidate)) {
      if (typeof part.text === 'string') {
        if (part.thought === true) reasoning += part.text;
        else content += part.text;
      } else if (isJsonObject(part.functionCall)) {
        this.onFunctionCall(state, part.functionCall, part.thoughtSignature, calls);
      }
    }
    let finish: string | null = null;
    const reason = candidate.finishReason;
    if (typeof reason === 'string' && reason !== '' && reason !== 'FINISH_REASON_UNSPECIFIED' && !state.finished) {
      this.close(state, calls);
      finish = mapFinishReason(reason, state.toolCalls > 0);
      state.finished = true;
    }
    if (reasoning !== '') delta.reasoning_content = reasoning;
    if (content !== '') delta.content = content;
    const toolCalls = calls.list();
    if (toolCalls.length > 0) delta.tool_calls = toolCalls;
    if (Object.keys(delta).length === 0 && finish === null) return undefined;
    return this.choice(index, state, delta, finish, toOpenAILogprobs(candidate.logprobsResult));
  }

  private choice(index: number, state: ChoiceState, delta: JsonObject, finish: string | null, logprobs: JsonObject | null): JsonObject {
    const first = !state.started;
    state.started = true;
    if (finish !== null) state.finished = true;
    return { index, delta: first ? { role: 'assistant', ...delta } : delta, logprobs, finish_reason: finish };
  }

  /**
   * A whole call ({name, args}) becomes one complete tool-call delta. A streamed one opens with
   * {name, willContinue} (sent at once, arguments ''), gathers partialArgs, and ends with an empty
   * functionCall, the next named call, or the finish: only then are its arguments known as JSON text.
   */
  private onFunctionCall(state: ChoiceState, call: JsonObject, signature: unknown, calls: ToolCallDeltas): void {
    const name = typeof call.name === 'string' && call.name !== '' ? call.name : undefined;
    if (name !== undefined) {
      this.close(state, calls);
      const index = state.toolCalls++;
      const streamed = call.willContinue === true || (call.args === undefined && Array.isArray(call.partialArgs));
      if (!streamed) {
        calls.add(index, openAIToolCall(name, JSON.stringify(call.args ?? {}), signature, index));
        return;
      }
      calls.add(index, openAIToolCall(name, '', signature, index));
      state.open = { index, args: new PartialArgs() };
    }
    // partialArgs with no call opened before them have nothing to belong to.
    if (!state.open) return;
    if (Array.isArray(call.partialArgs)) state.open.args.apply(call.partialArgs);
    if (call.willContinue !== true) this.close(state, calls);
  }

  private close(state: ChoiceState, calls: ToolCallDeltas): void {
    if (!state.open) return;
    calls.add(state.open.index, { index: state.open.index, function: { arguments: JSON.stringify(state.open.args.value) } });
    state.open = undefined;
  }
}
