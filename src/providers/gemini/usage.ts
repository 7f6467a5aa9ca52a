// Reads Gemini `usageMetadata` into billable counts and the OpenAI-shaped usage object.
import { isJsonObject } from '../../json-object.js';
import type { ReportedUsage } from '../types.js';
import { reportTokens } from '../usage-report.js';

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/**
 * Null when the object carries no counts (stream chunks may hold only `trafficType`). Gemini's JSON omits
 * zero counts, so a missing count beside a present prompt count is 0. `candidatesTokenCount` excludes
 * thoughts, so output = candidates + thoughts; tool-use prompt tokens (e.g. search results fed back) are input.
 */
export function readGeminiUsage(raw: unknown): ReportedUsage | null {
  if (!isJsonObject(raw)) return null;
  const prompt = count(raw.promptTokenCount);
  if (prompt === undefined) return null;
  const input = prompt + (count(raw.toolUsePromptTokenCount) ?? 0);
  const reasoning = count(raw.thoughtsTokenCount) ?? 0;
  const output = (count(raw.candidatesTokenCount) ?? 0) + reasoning;
  // Cached content is part of promptTokenCount.
  const cached = Math.min(count(raw.cachedContentTokenCount) ?? 0, input);
  return reportTokens({ input, cachedInput: cached, output, reasoning });
}
