// product.md §7: `reasoning_effort` low/medium/high → a thinking budget of 1024/4096/16384 tokens for
// providers that take a budget (Anthropic, Gemini), never more than max_out − 1; below 1025 output
// tokens thinking stays off.

const BUDGETS: Readonly<Record<string, number>> = { low: 1024, medium: 4096, high: 16384 };
const MIN_BUDGET = 1024;

/** The thinking budget, or undefined when thinking stays off. */
export function thinkingBudget(effort: unknown, maxOutput: number): number | undefined {
  const budget = typeof effort === 'string' ? BUDGETS[effort] : undefined;
  if (budget === undefined || maxOutput < MIN_BUDGET + 1) return undefined;
  return Math.min(budget, maxOutput - 1);
}
