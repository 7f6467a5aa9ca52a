// Which Claude models take `thinking: {type: "adaptive"}` with `output_config.effort` instead of a
// `budget_tokens` (product.md §14, "Translated"): Claude 4.6 and later — 4.7 and later reject
// `thinking.type: "enabled"` with a budget outright. Read from the upstream model id: `claude-opus-4-7`,
// `claude-sonnet-4-6-20260101`; `claude-opus-4-20250514` is 4.0 (the date is no minor version), the older
// `claude-3-7-sonnet-...` naming is 3.x.
const CLAUDE_VERSION = /^claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?:-|$)/;

/** The Claude version of a model id, or undefined when the id is not a Claude 4+ style id. */
export function claudeVersion(model: string): { readonly major: number; readonly minor: number } | undefined {
  const match = CLAUDE_VERSION.exec(model);
  if (!match) return undefined;
  return { major: Number(match[1]), minor: match[2] === undefined ? 0 : Number(match[2]) };
}

/** True for Claude ≥ 4.6: adaptive thinking and an effort, never a token budget. */
export function takesAdaptiveThinking(model: string): boolean {
  const version = claudeVersion(model);
  return version !== undefined && (version.major > 4 || (version.major === 4 && version.minor >= 6));
}

/** A Responses / chat reasoning effort as Anthropic's `output_config.effort` (low, medium, high, max); undefined: no thinking. */
export function anthropicEffort(effort: unknown): string | undefined {
  switch (effort) {
    case 'minimal':
    case 'low':
      return 'low';
    case 'medium':
      return 'medium';
    case 'high':
      return 'high';
    case 'xhigh':
    case 'max':
      return 'max';
    default:
      return undefined; // 'none', absent, or a value no model knows
  }
}
