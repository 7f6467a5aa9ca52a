// Irons out the OpenAI-compatible dialects so every client receives the convention's shape:
// vLLM's `reasoning` → `reasoning_content`; Mistral's tool calls without `index`/`type`;
// Azure's `system_fingerprint: null` (the schema says string).
import { isJsonObject, type JsonObject } from '../../json-object.js';

function renameReasoning(target: JsonObject): void {
  if (typeof target.reasoning === 'string' && target.reasoning_content === undefined) {
    target.reasoning_content = target.reasoning;
    delete target.reasoning;
  }
}

export function normaliseEnvelope(body: JsonObject, clientModel: string): void {
  body.model = clientModel;
  if (body.system_fingerprint === null) delete body.system_fingerprint;
}

/** A non-stream choice: the convention's required keys present, reasoning and tool calls in its shape. */
export function normaliseCompletionChoice(choice: JsonObject): void {
  if (choice.logprobs === undefined) choice.logprobs = null;
  normaliseMessage(choice.message);
}

function normaliseMessage(message: unknown): void {
  if (!isJsonObject(message)) return;
  renameReasoning(message);
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      if (isJsonObject(call) && call.type === undefined) call.type = 'function';
    }
  }
}

/** Tool-call numbering of one choice: upstream index → the dense index the client sees. */
interface ChoiceToolCalls {
  next: number;
  readonly byUpstreamIndex: Map<number, number>;
}

/**
 * Gives each choice's tool calls dense indexes 0, 1, 2... in order of first appearance. Some servers
 * omit the index (Mistral) or start at 1 (an OpenAI-compatible proxy in front of Anthropic); the
 * SDKs assemble arguments by index and break on gaps.
 */
export class ToolCallIndexer {
  private readonly choices = new Map<number, ChoiceToolCalls>();

  normaliseChoice(choice: JsonObject): void {
    // xAI omits finish_reason until the last chunk; the convention sends null.
    if (choice.finish_reason === undefined) choice.finish_reason = null;
    const delta = choice.delta;
    if (!isJsonObject(delta)) return;
    renameReasoning(delta);
    if (!Array.isArray(delta.tool_calls)) return;
    const choiceIndex = typeof choice.index === 'number' ? choice.index : 0;
    let state = this.choices.get(choiceIndex);
    if (!state) this.choices.set(choiceIndex, (state = { next: 0, byUpstreamIndex: new Map() }));
    for (const call of delta.tool_calls) {
      if (!isJsonObject(call)) continue;
      if (typeof call.index === 'number') {
        let index = state.byUpstreamIndex.get(call.index);
        if (index === undefined) state.byUpstreamIndex.set(call.index, (index = state.next++));
        call.index = index;
      } else {
        // Without an index, a call with an id starts a new tool call; one without continues the last.
        call.index = typeof call.id === 'string' ? state.next++ : Math.max(state.next - 1, 0);
      }
      if (call.type === undefined && typeof call.id === 'string') call.type = 'function';
    }
  }
}
