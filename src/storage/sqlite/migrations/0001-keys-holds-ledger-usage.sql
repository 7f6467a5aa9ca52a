-- SQLite migration 1: keys-holds-ledger-usage. Shipped: never edit it; add the next number.
--
-- The first schema. Money columns are INTEGER nano-dollars; times are epoch milliseconds unless named
-- *_at TEXT.

      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        prefix TEXT NOT NULL,
        secret_hash TEXT NOT NULL UNIQUE,
        balance INTEGER NOT NULL DEFAULT 0,   -- cached: Σtopup + Σadjust − Σcapture
        held INTEGER NOT NULL DEFAULT 0,      -- cached: Σhold − Σrelease
        spent INTEGER NOT NULL DEFAULT 0,     -- cached: Σcapture
        allowed_models TEXT NOT NULL,         -- JSON array of model ids, or '*'
        status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
        created_at TEXT NOT NULL,
        revoked_at TEXT
      ) STRICT;

      CREATE TABLE holds (
        request_id TEXT PRIMARY KEY,
        key_id TEXT NOT NULL REFERENCES api_keys (id),
        amount INTEGER NOT NULL CHECK (amount >= 0),
        status TEXT NOT NULL CHECK (status IN ('active', 'captured', 'released', 'expired')),
        expires_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        settled_at INTEGER
      ) STRICT;
      CREATE INDEX holds_active_by_expiry ON holds (expires_at) WHERE status = 'active';

      CREATE TABLE ledger_entries (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        key_id TEXT NOT NULL REFERENCES api_keys (id),
        request_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('topup', 'hold', 'capture', 'release', 'adjust')),
        amount INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        UNIQUE (request_id, kind)
      ) STRICT;
      CREATE INDEX ledger_entries_by_key ON ledger_entries (key_id);

      CREATE TABLE usage_records (
        request_id TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        key_id TEXT NOT NULL REFERENCES api_keys (id),
        model TEXT NOT NULL,
        provider TEXT NOT NULL,
        upstream_model TEXT NOT NULL,
        status INTEGER NOT NULL,
        input_tokens INTEGER NOT NULL,
        cached_input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        reasoning_tokens INTEGER NOT NULL,
        cost INTEGER NOT NULL,
        usage_source TEXT NOT NULL CHECK (usage_source IN ('upstream', 'estimated')),
        attempts TEXT NOT NULL                -- JSON array of {provider, status, duration_ms}
      ) STRICT;
      CREATE INDEX usage_records_by_time ON usage_records (created_at);
      CREATE INDEX usage_records_by_key_time ON usage_records (key_id, created_at);
    