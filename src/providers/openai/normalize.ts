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

export function normaliseMessage(message: unknown): void {
  if (!isJsonObject(message)) return;
  renameReasoning(message);
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      if (isJsonObject(call) && call.type === undefined) call.type = 'function';
    }
  }
}

/** Tracks tool-call indexes across a stream, for servers that omit them. */
export class ToolCallIndexer {
  private next = 0;

  normaliseDelta(delta: unknown): void {
    if (!isJsonObject(delta)) return;
    renameReasoning(delta);
    if (!Array.isArray(delta.tool_calls)) return;
    for (const call of delta.tool_calls) {
      if (!isJsonObject(call)) continue;
      if (typeof call.index === 'number') {
        this.next = Math.max(this.next, call.index + 1);
      } else {
        // A call with an id starts a new tool call; one without continues the last.
        call.index = typeof call.id === 'string' ? this.next++ : Math.max(this.next - 1, 0);
      }
      if (call.type === undefined && typeof call.id === 'string') call.type = 'function';
    }
  }
}
