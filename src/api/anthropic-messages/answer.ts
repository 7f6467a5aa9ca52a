// A whole Messages answer from a native cell: the upstream's JSON as it came, its usage read for billing,
// and `usage.cost` (USD charged) added before it goes to the client — a translated cell's Message too
// (to-chat/answer.ts writes its usage in the same convention).
import { isJsonObject, type JsonObject } from '../../json-object.js';
import type { Charge } from '../../pipeline/admission/reservation.js';
import type { ApiAnswer } from '../../pipeline/client-api.js';
import { COUNT_BUDGET_MS, TokenTally } from '../../tokens/token-tally.js';
import { countText } from '../../tokens/count-text.js';
import { UsageCounts, usageWithCost } from './usage.js';

/** The text of each output block the model wrote: text, thinking, a tool's name and input. */
function outputTexts(body: JsonObject): { all: string[]; thinking: string[] } {
  const all: string[] = [];
  const thinking: string[] = [];
  if (!Array.isArray(body.content)) return { all, thinking };
  for (const block of body.content) {
    if (!isJsonObject(block)) continue;
    if (typeof block.text === 'string') all.push(block.text);
    if (typeof block.thinking === 'string') {
      all.push(block.thinking);
      thinking.push(block.thinking);
    }
    if (typeof block.name === 'string') all.push(block.name);
    if (block.input !== undefined) all.push(JSON.stringify(block.input));
  }
  return { all, thinking };
}

/** Tokenizer count of a Message's output (its text, thinking and tool calls). */
export function messageOutputTokens(message: JsonObject): number {
  const tally = new TokenTally(COUNT_BUDGET_MS);
  for (const text of outputTexts(message).all) tally.add(text);
  return tally.total();
}

export function messagesAnswer(json: JsonObject, askedOneHour: () => boolean): ApiAnswer {
  const counts = new UsageCounts();
  counts.merge(json.usage);
  const usage = counts.report(countText(outputTexts(json).thinking.join('')), askedOneHour);
  return {
    body: json,
    usage,
    // Counted only when needed (no usage, or a fault).
    delivered: () => messageOutputTokens(json),
  };
}

export function messagesAnswerWith(answer: ApiAnswer, charge: Charge): JsonObject {
  answer.body.usage = usageWithCost(answer.body.usage, charge);
  return answer.body;
}
