// Watches what the client receives (OpenAI-shaped chunks or a completion) so that a request without
// upstream usage can be settled on the tokenizer count of the output actually delivered. The text is
// counted as it arrives: however long a stream runs, the meter holds only a bounded tail.
import { COUNT_BUDGET_MS, TokenTally } from '../../tokens/token-tally.js';
import { isJsonObject, type JsonObject } from '../../json-object.js';

export class OutputMeter {
  private readonly tally: TokenTally;
  /** Any content, reasoning or tool call reached the client. */
  sawOutput = false;
  /** A choice finished (finish_reason set). */
  sawFinish = false;

  /** `tally` is injectable so that a test can count without a wall-clock budget. */
  constructor(tally: TokenTally = new TokenTally(COUNT_BUDGET_MS)) {
    this.tally = tally;
  }

  observeChunk(chunk: JsonObject): void {
    const choices = chunk.choices;
    if (!Array.isArray(choices)) return;
    for (const choice of choices) {
      if (!isJsonObject(choice)) continue;
      this.observeMessage(choice.delta);
      if (typeof choice.finish_reason === 'string') this.sawFinish = true;
    }
  }

  observeCompletion(body: JsonObject): void {
    if (!Array.isArray(body.choices)) return;
    for (const choice of body.choices) if (isJsonObject(choice)) this.observeMessage(choice.message);
  }

  /** The output tokens delivered: the count of all observed text as one string (exact for ordinary output). */
  tokens(): number {
    return this.tally.total();
  }

  private push(text: unknown): void {
    if (typeof text === 'string' && text.length > 0) {
      this.tally.push(text);
      this.sawOutput = true;
    }
  }

  private observeMessage(message: unknown): void {
    if (!isJsonObject(message)) return;
    this.push(message.content);
    this.push(message.reasoning_content);
    this.push(message.refusal);
    if (!Array.isArray(message.tool_calls)) return;
    for (const call of message.tool_calls) {
      if (!isJsonObject(call) || !isJsonObject(call.function)) continue;
      this.push(call.function.name);
      this.push(call.function.arguments);
    }
  }
}
