// Extended thinking → chat's `reasoning_effort` (docs/adr/0043-messages-to-chat.md). An effort the client
// names (`output_config.effort`) is carried as it is, `max` as `high` (the most every reasoning model takes);
// a thinking budget becomes the effort whose §7 budget (low 1,024, medium 4,096, high 16,384 tokens) is
// nearest on a log scale: up to 2,048 low, up to 8,192 medium, above high. Adaptive thinking without an
// effort, disabled thinking and no thinking at all send none: the upstream's own default.
import { isJsonObject } from '../../../json-object.js';

const EFFORTS: Readonly<Record<string, string>> = { low: 'low', medium: 'medium', high: 'high', max: 'high' };
const LOW_UP_TO = 2_048;
const MEDIUM_UP_TO = 8_192;

export function reasoningEffort(thinking: unknown, outputConfig: unknown, dropped: Set<string>): string | undefined {
  const named = isJsonObject(outputConfig) ? outputConfig.effort : undefined;
  if (named !== undefined && named !== null) {
    const effort = typeof named === 'string' ? EFFORTS[named] : undefined;
    if (effort) return effort;
    dropped.add('output_config.effort');
  }
  if (!isJsonObject(thinking) || thinking.type !== 'enabled' || typeof thinking.budget_tokens !== 'number') return undefined;
  const budget = thinking.budget_tokens;
  return budget <= LOW_UP_TO ? 'low' : budget <= MEDIUM_UP_TO ? 'medium' : 'high';
}
