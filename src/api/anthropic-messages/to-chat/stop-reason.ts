// A chat finish_reason → Messages stop_reason: `length` → max_tokens, `tool_calls` → tool_use,
// `content_filter` → refusal, `stop` → end_turn — or stop_sequence with the sequence, when the upstream says
// which of the client's stop_sequences it met (vLLM's `stop_reason`; OpenAI does not say, so end_turn).
// Some servers (Ollama) finish a turn of tool calls with `stop`: tool calls made it a tool_use turn; and
// OpenAI finishes a refusal with `stop`: the refusal makes it one.

export interface StopReason {
  readonly stop_reason: string;
  readonly stop_sequence: string | null;
}

export interface FinishFacts {
  /** The choice's finish_reason. */
  readonly finish: unknown;
  readonly toolCalls: boolean;
  /** The answer carried a `refusal`. */
  readonly refused: boolean;
  /** The choice's vLLM-style `stop_reason`: the stop string it met. */
  readonly matched: unknown;
  /** The request's stop_sequences. */
  readonly stops: readonly unknown[];
}

export function stopReasonOf({ finish, toolCalls, refused, matched, stops }: FinishFacts): StopReason {
  switch (finish) {
    case 'length':
      return { stop_reason: 'max_tokens', stop_sequence: null };
    case 'tool_calls':
    case 'function_call':
      return { stop_reason: 'tool_use', stop_sequence: null };
    case 'content_filter':
      return { stop_reason: 'refusal', stop_sequence: null };
    default:
      if (toolCalls) return { stop_reason: 'tool_use', stop_sequence: null };
      if (refused) return { stop_reason: 'refusal', stop_sequence: null };
      if (typeof matched === 'string' && stops.includes(matched)) return { stop_reason: 'stop_sequence', stop_sequence: matched };
      return { stop_reason: 'end_turn', stop_sequence: null };
  }
}
