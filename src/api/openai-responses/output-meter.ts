// What a Responses answer delivered, counted as it reaches the client, for a request settled without the
// upstream's usage (a cut stream, a client gone): the text of output_text, refusal, function-call
// argument, custom-tool input and reasoning summary deltas — and, for an item that arrived whole with no
// deltas, its text. Encrypted reasoning is opaque bytes, not text the model wrote, and is never counted.
import { isJsonObject, type JsonObject } from '../../json-object.js';
import { COUNT_BUDGET_MS, TokenTally } from '../../tokens/token-tally.js';

/** Stream events whose `delta` is output text the model produced. */
const DELTA_EVENTS: ReadonlySet<string> = new Set([
  'response.output_text.delta',
  'response.refusal.delta',
  'response.function_call_arguments.delta',
  'response.custom_tool_call_input.delta',
  'response.reasoning_summary_text.delta',
  'response.reasoning_text.delta',
]);

export function isDeltaEvent(type: string): boolean {
  return DELTA_EVENTS.has(type);
}

export class ResponsesOutputMeter {
  private readonly tally = new TokenTally(COUNT_BUDGET_MS);
  /** Output (a delta or a finished item) was delivered. */
  sawOutput = false;

  delta(text: unknown): void {
    if (typeof text !== 'string' || text.length === 0) return;
    this.tally.push(text);
    this.sawOutput = true;
  }

  /** A whole output item's text (an item whose deltas were not seen, or a non-stream answer's). */
  item(item: JsonObject): void {
    this.sawOutput = true;
    for (const text of itemTexts(item)) this.tally.push(text);
  }

  tokens(): number {
    return this.tally.total();
  }
}

/** The texts the model wrote in one output item. */
function itemTexts(item: JsonObject): string[] {
  const texts: string[] = [];
  const add = (value: unknown) => {
    if (typeof value === 'string' && value.length > 0) texts.push(value);
  };
  const parts = (value: unknown, field: string) => {
    if (!Array.isArray(value)) return;
    for (const part of value) if (isJsonObject(part)) add(part[field] ?? part.text);
  };
  switch (item.type) {
    case 'message':
      if (Array.isArray(item.content)) for (const part of item.content) if (isJsonObject(part)) add(part.type === 'refusal' ? part.refusal : part.text);
      break;
    case 'function_call':
      add(item.name);
      add(item.arguments);
      break;
    case 'custom_tool_call':
      add(item.name);
      add(item.input);
      break;
    case 'reasoning':
      parts(item.summary, 'text');
      parts(item.content, 'text');
      break;
    default:
      break;
  }
  return texts;
}
