-- PostgreSQL migration 1: keys-holds-ledger-usage. Shipped: never edit it; add the next number.
--
-- The first schema: the same tables and columns as the SQLite ones, in PostgreSQL's types. Money
-- columns are BIGINT nano-dollars; times are epoch milliseconds unless named *_at TEXT. Settlement and
-- release ran server-side, one round trip each (tollgate_close_hold), dropped by migration 12: the batch
-- function of migration 5 took over.

      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        prefix TEXT NOT NULL,
        secret_hash TEXT NOT NULL UNIQUE,
        balance BIGINT NOT NULL DEFAULT 0,    -- cached: Σtopup + Σadjust − Σcapture
        held BIGINT NOT NULL DEFAULT 0,       -- cached: Σhold − Σrelease
        spent BIGINT NOT NULL DEFAULT 0,      -- cached: Σcapture
        allowed_models TEXT NOT NULL,         -- JSON array of model ids, or '*'
        status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
        created_at TEXT NOT NULL,
        revoked_at TEXT
      );

      CREATE TABLE holds (
        request_id TEXT PRIMARY KEY,
        key_id TEXT NOT NULL REFERENCES api_keys (id),
        amount BIGINT NOT NULL CHECK (amount >= 0),
        status TEXT NOT NULL CHECK (status IN ('active', 'captured', 'released', 'expired')),
        expires_at BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        settled_at BIGINT
      );
      CREATE INDEX holds_active_by_expiry ON holds (expires_at) WHERE status = 'active';

      CREATE TABLE ledger_entries (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        key_id TEXT NOT NULL REFERENCES api_keys (id),
        request_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('topup', 'hold', 'capture', 'release', 'adjust')),
        amount BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        UNIQUE (request_id, kind)
      );
      CREATE INDEX ledger_entries_by_key ON ledger_entries (key_id);

      CREATE TABLE usage_records (
        seq BIGINT GENERATED ALWAYS AS IDENTITY,  -- insertion order (SQLite's rowid)
        request_id TEXT PRIMARY KEY,
        created_at BIGINT NOT NULL,
        key_id TEXT NOT NULL REFERENCES api_keys (id),
        model TEXT NOT NULL,
        provider TEXT NOT NULL,
        upstream_model TEXT NOT NULL,
        status INTEGER NOT NULL,
        input_tokens INTEGER NOT NULL,
        cached_input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        reasoning_tokens INTEGER NOT NULL,
        cost BIGINT NOT NULL,
        usage_source TEXT NOT NULL CHECK (usage_source IN ('upstream', 'estimated')),
        attempts TEXT NOT NULL                -- JSON array of {provider, status, duration_ms}
      );
      CREATE INDEX usage_records_by_time ON usage_records (created_at);
      CREATE INDEX usage_records_by_key_time ON usage_records (key_id, created_at);

      -- Settlement and release run server-side, one round trip each: the hold row is locked first, then
      -- the key row, exactly as sqlite/ledger-store.ts does it, and the key's row lock is held for one
      -- statement's worth of work instead of a client's round trips (docs/adr/0012-postgresql.md).
      CREATE FUNCTION tollgate_close_hold(p_request_id TEXT, p_final TEXT, p_cost BIGINT, p_now BIGINT)
      RETURNS TEXT LANGUAGE plpgsql AS $$
      DECLARE
        h holds%ROWTYPE;
      BEGIN
        SELECT * INTO h FROM holds WHERE request_id = p_request_id FOR UPDATE;
        IF NOT FOUND THEN RETURN 'missing'; END IF;
        IF h.status NOT IN ('active', 'expired') THEN RETURN 'duplicate'; END IF;
        IF p_final = 'released' AND h.status = 'expired' THEN RETURN 'expired'; END IF;
        UPDATE holds SET status = p_final, settled_at = p_now WHERE request_id = p_request_id;
        IF h.status = 'active' THEN
          INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at)
            VALUES (h.key_id, p_request_id, 'release', h.amount, p_now);
        END IF;
        IF p_final = 'captured' THEN
          INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at)
            VALUES (h.key_id, p_request_id, 'capture', p_cost, p_now);
          UPDATE api_keys SET balance = balance - p_cost, spent = spent + p_cost,
            held = held - CASE WHEN h.status = 'active' THEN h.amount ELSE 0 END
            WHERE id = h.key_id;
          RETURN CASE WHEN h.status = 'active' THEN 'captured' ELSE 'late' END;
        END IF;
        UPDATE api_keys SET held = held - h.amount WHERE id = h.key_id;
        RETURN 'released';
      END $$;
    