// The dry-run answer (X-Tollgate-Dry-Run: 1, product.md §13): what the request would hold, what the key
// has available, and the largest max_tokens that would fit — the figures a 402 would carry, without
// placing a hold or calling an upstream.
import { nanoToUsd, type Nano } from './money.js';
import { affordableMaxTokens } from './pricing.js';
import type { HoldSizing } from './insufficient-balance.js';

export function quoteOf(sizing: HoldSizing, available: Nano): Record<string, unknown> {
  const affordable = sizing.modelMaxOutput === undefined ? 0 : affordableMaxTokens(sizing.rates, sizing.inputTokens, sizing.n, available, sizing.modelMaxOutput, sizing.cacheWrite);
  return {
    object: 'quote',
    hold: nanoToUsd(sizing.hold),
    available: nanoToUsd(available),
    affordable_max_tokens: affordable,
    input_tokens: sizing.inputTokens,
  };
}
