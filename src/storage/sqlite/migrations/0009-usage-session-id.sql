-- SQLite migration 9: usage-session-id. Shipped: never edit it; add the next number.
--
-- Each usage row records the agent session its client named (Claude Code's x-claude-code-session-id,
-- Codex's session-id), so an operator can see what one agent session cost; NULL when the client named
-- none (docs/adr/0040-agent-sessions-and-price-modifiers.md). The client API column (endpoint) now also
-- holds messages and responses: it has no CHECK, so nothing changes for it. The index holds only the
-- rows that name a session (an equality filter on session_id can use it).

      ALTER TABLE usage_records ADD COLUMN session_id TEXT;
      CREATE INDEX usage_records_by_session ON usage_records (session_id) WHERE session_id IS NOT NULL;
