// The agent session a request belongs to, as its client names it, so that the usage rows of one Claude
// Code or Codex session can be found and added up (product.md §14). Claude Code sends
// `x-claude-code-session-id` on every request; Codex CLI sends `session-id` (codex-rs/codex-api
// requests/headers.rs, build_session_headers), older Codex versions `session_id`. Any client API may
// carry one. The value is the client's: kept as text, cut to a bounded length, and never a metrics label.
import type { IncomingHttpHeaders } from 'node:http';

/** In the order they are read: the first one present wins. */
export const SESSION_HEADERS = ['x-claude-code-session-id', 'session-id', 'session_id'] as const;

/** Session ids are UUIDs in practice; a longer one is cut so that a client cannot grow the usage rows. */
export const MAX_SESSION_ID = 200;

export function sessionIdOf(headers: IncomingHttpHeaders): string | null {
  for (const name of SESSION_HEADERS) {
    const value = headers[name];
    // Node joins a repeated header with ", " (an unknown header) or keeps it as an array (set-cookie only).
    const text = (Array.isArray(value) ? value[0] : value)?.trim();
    if (text) return text.slice(0, MAX_SESSION_ID);
  }
  return null;
}
