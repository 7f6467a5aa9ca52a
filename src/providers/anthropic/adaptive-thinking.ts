// Which Claude models take adaptive thinking, and the effort a chat `reasoning_effort` becomes there (ADR 0046).
//
// Claude 4.6 introduced `thinking: {type: "adaptive"}` steered by `output_config.effort`; it deprecated
// `{type: "enabled", budget_tokens}`, and 4.7+ answer such a request 400. The version is read from the
// upstream model id, `claude-<family>-<major>[-<minor>][-<date or suffix>]` (claude-opus-4-7,
// claude-sonnet-4-6-20260101, claude-haiku-5): the minor is one or two digits, so an 8-digit date after
// the major (claude-opus-4-20250514) is not mistaken for one. A prefix before `claude-` (a Bedrock-style
// `anthropic.claude-opus-4-6-v1`, a `vendor/` path) is allowed. Ids in the old order
// (claude-3-7-sonnet-...), without a version (an alias the operator named) or not Claude keep the budget
// mapping: it is what every model before 4.6 accepts.

export interface ClaudeVersion {
  family: string;
  major: number;
  minor: number;
}

const CLAUDE_ID = /(?:^|[./:])claude-([a-z]+)-(\d{1,2})(?:[-.](\d{1,2}))?(?=$|[-@:.])/;

/** The family and version in a Claude model id, or undefined when the id does not name one. */
export function claudeVersion(model: string): ClaudeVersion | undefined {
  const match = CLAUDE_ID.exec(model.toLowerCase());
  if (!match) return undefined;
  return { family: match[1]!, major: Number(match[2]), minor: match[3] === undefined ? 0 : Number(match[3]) };
}

/** Claude ≥ 4.6: reasoning is asked for with adaptive thinking and an effort, never a token budget. */
export function takesAdaptiveThinking(model: string): boolean {
  const version = claudeVersion(model);
  if (!version) return false;
  return version.major > 4 || (version.major === 4 && version.minor >= 6);
}

// OpenAI's effort names → Anthropic's, for chat `reasoning_effort` and Responses `reasoning.effort` alike.
// `minimal` is the least reasoning OpenAI asks for: Anthropic's least is `low`. `xhigh` and `max` → `high`:
// the highest effort every adaptive model accepts (Anthropic's `xhigh` is on Opus 4.7+ only, `max` not on
// every model, and either would turn a request into a 400 elsewhere). `none` (and anything else) → no thinking.
const EFFORTS: Readonly<Record<string, string>> = { minimal: 'low', low: 'low', medium: 'medium', high: 'high', xhigh: 'high', max: 'high' };

/**
 * The `thinking` field the gateway sends when it turns adaptive thinking on: `display: "summarized"` because
 * 4.7+ default to omitting the thinking text, which the client (reasoning_content, a reasoning item's
 * summary) expects to read; 4.6 summarizes by default anyway.
 */
export function adaptiveThinking(): Record<string, unknown> {
  return { type: 'adaptive', display: 'summarized' };
}

/** The `output_config.effort` for a chat `reasoning_effort` or a Responses `reasoning.effort`, or undefined when thinking stays off. */
export function adaptiveEffort(effort: unknown): string | undefined {
  return typeof effort === 'string' ? EFFORTS[effort] : undefined;
}
