// Gemini `logprobsResult` (chosen and top candidates per token) → OpenAI `logprobs.content`.
import { isJsonObject, type JsonObject } from '../../json-object.js';

function tokenLogprob(candidate: unknown): JsonObject | undefined {
  if (!isJsonObject(candidate) || typeof candidate.token !== 'string') return undefined;
  return {
    token: candidate.token,
    logprob: typeof candidate.logProbability === 'number' ? candidate.logProbability : 0,
    bytes: [...Buffer.from(candidate.token, 'utf8')],
  };
}

/** Null when the candidate carries no log probabilities (the client did not ask for them). */
export function toOpenAILogprobs(result: unknown): JsonObject | null {
  if (!isJsonObject(result) || !Array.isArray(result.chosenCandidates)) return null;
  const top = Array.isArray(result.topCandidates) ? result.topCandidates : [];
  const content: JsonObject[] = [];
  result.chosenCandidates.forEach((chosen: unknown, i) => {
    const entry = tokenLogprob(chosen);
    if (!entry) return;
    const alternatives = top[i];
    const list = isJsonObject(alternatives) && Array.isArray(alternatives.candidates) ? alternatives.candidates : [];
    entry.top_logprobs = list.map(tokenLogprob).filter((t): t is JsonObject => t !== undefined);
    content.push(entry);
  });
  return { content, refusal: null };
}
