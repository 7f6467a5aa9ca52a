// Builds OpenAI chat.completion.chunk objects for translators of non-OpenAI streams (one choice).
import type { JsonObject } from '../json-object.js';

export class ChunkBuilder {
  id: string;
  created: number;

  constructor(
    private readonly model: string,
    id = '',
  ) {
    this.id = id;
    this.created = Math.floor(Date.now() / 1000);
  }

  chunk(delta: JsonObject, finishReason: string | null = null): JsonObject {
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    };
  }
}
