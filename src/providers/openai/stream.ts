// OpenAI-style SSE → client chunks. Usage is taken wherever it appears (the final `choices: []` chunk,
// the finish chunk for DeepSeek/Mistral, every chunk for vLLM — the last report wins) and removed from
// the relayed chunks: the gateway itself sends the one final usage chunk, with the cost.
import { isJsonObject } from '../../json-object.js';
import type { SseEvent } from '../framing/sse.js';
import { parseStreamEvent, UpstreamFailureError, type ChatStreamTranslator, type JsonObject, type ReportedUsage, type UpstreamTarget } from '../types.js';
import { readOpenAIErrorObject } from './errors.js';
import { normaliseEnvelope, ToolCallIndexer } from './normalize.js';
import { withModifiers, type ModifierReport } from '../usage-report.js';
import { mergeOpenAIModifiers, readOpenAIUsage } from './usage.js';

export class OpenAIChatStreamTranslator implements ChatStreamTranslator {
  finished = false;
  usage: ReportedUsage | null = null;
  id = '';
  created = 0;
  private readonly toolCalls = new ToolCallIndexer();
  /** The service tier and model the chunks reported so far (the last report wins). */
  private readonly served: { modifiers?: ModifierReport } = {};

  constructor(private readonly target: UpstreamTarget) {}

  onEvent(event: SseEvent): JsonObject | null {
    if (event.data === '[DONE]') {
      this.finished = true;
      return null;
    }
    const chunk = parseStreamEvent(event);
    if (chunk.error !== undefined) throw new UpstreamFailureError(readOpenAIErrorObject(chunk.error, 0));
    // Azure's prelude chunk has id "" and created 0: keep the real ones for the final chunk.
    if (typeof chunk.id === 'string' && chunk.id !== '') this.id = chunk.id;
    if (typeof chunk.created === 'number' && chunk.created > 0) this.created = chunk.created;
    mergeOpenAIModifiers(this.served, chunk);
    if (chunk.usage !== undefined && chunk.usage !== null) {
      const usage = readOpenAIUsage(chunk.usage);
      if (usage) this.usage = withModifiers(usage, this.served.modifiers);
      chunk.usage = null;
    }
    const choices = chunk.choices;
    // No choices: the usage chunk or Azure's prompt-filter prelude; nothing for the client.
    if (!Array.isArray(choices) || choices.length === 0) return null;
    normaliseEnvelope(chunk, this.target.clientModel);
    if (chunk.object !== 'chat.completion.chunk') chunk.object = 'chat.completion.chunk';
    for (const choice of choices) if (isJsonObject(choice)) this.toolCalls.normaliseChoice(choice);
    return chunk;
  }
}
