-- SQLite migration 10: responses-state. Shipped: never edit it; add the next number.
--
-- The Responses API state (product.md §14, docs/adr/0039-responses-native-cells.md): per key, each
-- response id an upstream stored and each of its output item ids, with the upstream account (provider
-- id) that holds it and the response's input and output tokens — ids and counts only, never content.
-- A request naming one is pinned to that account and holds its context; an id not here is a 404. Rows
-- live 30 days (expires_at), then the sweeper deletes them.

      CREATE TABLE response_ids (
        key_id TEXT NOT NULL REFERENCES api_keys (id),
        id TEXT NOT NULL,                   -- a response id (resp_...) or one of its output item ids
        response_id TEXT NOT NULL,          -- the response it is or belongs to
        provider TEXT NOT NULL,             -- the upstream account that holds it
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,        -- epoch ms
        PRIMARY KEY (key_id, id)
      ) STRICT;
      CREATE INDEX response_ids_by_expiry ON response_ids (expires_at);
