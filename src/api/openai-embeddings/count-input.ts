// The input of an embeddings request: a string, strings, or token arrays (counted by their length).
import { InputParts } from '../../tokens/count-text.js';

export function countEmbeddingInput(input: unknown): Promise<number> {
  const parts = new InputParts();
  if (typeof input === 'string') parts.text(input);
  else if (Array.isArray(input)) {
    for (const item of input) {
      if (typeof item === 'string') parts.text(item);
      else if (typeof item === 'number') parts.fixed += 1;
      else if (Array.isArray(item)) parts.fixed += item.length;
    }
  }
  return parts.count();
}
