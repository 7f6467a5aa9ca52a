// The token counts of a reported usage without its price modifiers (the served model, service tier,
// ... the answer named): for tests about counting; test/unit/providers/usage-modifiers.test.ts reads the
// modifiers themselves.
import type { TokenUsage } from '../../src/billing/pricing.js';

export function countsOf(tokens: TokenUsage | undefined): Omit<TokenUsage, 'modifiers'> | undefined {
  if (tokens === undefined) return undefined;
  const { modifiers: _modifiers, ...counts } = tokens;
  return counts;
}
