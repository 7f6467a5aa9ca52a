-- PostgreSQL migration 14: responses-state. Shipped: never edit it; add the next number.
--
-- See the SQLite migration 10: stored Responses ids per key, with the upstream account that holds each
-- and the response's token counts (never content), kept 30 days.

      CREATE TABLE response_ids (
        key_id TEXT NOT NULL REFERENCES api_keys (id),
        id TEXT NOT NULL,
        response_id TEXT NOT NULL,
        provider TEXT NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        expires_at BIGINT NOT NULL,
        PRIMARY KEY (key_id, id)
      );
      CREATE INDEX response_ids_by_expiry ON response_ids (expires_at);
