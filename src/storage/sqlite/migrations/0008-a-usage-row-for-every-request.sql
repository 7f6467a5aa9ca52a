-- SQLite migration 8: a-usage-row-for-every-request. Shipped: never edit it; add the next number.
--
-- Every request with a valid key leaves a usage row, also when it moved no money (refused, quoted,
-- failed before any upstream): model, provider and upstream model may be unknown (NULL) and the
-- usage source 'none'; and each row says which client API it came through, its error, latency and
-- time to first token (docs/adr/0028-a-row-for-every-request.md). SQLite cannot relax NOT NULL or a
-- CHECK in place, so the table is rebuilt with its rows and their rowids (the usage cursor).

      CREATE TABLE usage_records_v2 (
        request_id TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        key_id TEXT NOT NULL REFERENCES api_keys (id),
        model TEXT,
        provider TEXT,
        upstream_model TEXT,
        status INTEGER NOT NULL,
        input_tokens INTEGER NOT NULL,
        cached_input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        reasoning_tokens INTEGER NOT NULL,
        cost INTEGER NOT NULL,
        usage_source TEXT NOT NULL CHECK (usage_source IN ('upstream', 'estimated', 'none')),
        attempts TEXT NOT NULL,               -- JSON array of {provider, status, duration_ms}
        cache_write_tokens INTEGER NOT NULL DEFAULT 0,
        endpoint TEXT,                        -- the client API: chat | embeddings
        error_code TEXT,
        error_message TEXT,
        duration_ms INTEGER,
        first_token_ms INTEGER
      ) STRICT;
      INSERT INTO usage_records_v2 (rowid, request_id, created_at, key_id, model, provider, upstream_model, status,
          input_tokens, cached_input_tokens, output_tokens, reasoning_tokens, cost, usage_source, attempts, cache_write_tokens)
        SELECT rowid, request_id, created_at, key_id, model, provider, upstream_model, status,
          input_tokens, cached_input_tokens, output_tokens, reasoning_tokens, cost, usage_source, attempts, cache_write_tokens
        FROM usage_records ORDER BY rowid;
      DROP TABLE usage_records;
      ALTER TABLE usage_records_v2 RENAME TO usage_records;
      CREATE INDEX usage_records_by_time ON usage_records (created_at);
      CREATE INDEX usage_records_by_key_time ON usage_records (key_id, created_at);
      CREATE INDEX usage_records_by_key ON usage_records (key_id);

      -- Requests refused for want of a valid key, counted per minute (one row per minute, however many).
      CREATE TABLE unauthenticated_requests (
        minute INTEGER PRIMARY KEY,           -- the minute's start, epoch ms
        requests INTEGER NOT NULL
      ) STRICT;
    