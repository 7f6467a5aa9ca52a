-- PostgreSQL migration 16: redemption codes. Shipped: never edit it; add the next number.
--
-- See the SQLite migration 12 (docs/adr/0051-redemption-codes.md): only a code's SHA-256 and its first
-- characters are stored; a redeem claims the row by one conditional UPDATE in the transaction that
-- writes the account's top-up entry (request id 'redeem_' || id).

      CREATE TABLE redemption_codes (
        id TEXT PRIMARY KEY,
        code_hash TEXT NOT NULL UNIQUE,
        code_prefix TEXT NOT NULL,
        amount BIGINT NOT NULL CHECK (amount > 0),
        account_id TEXT REFERENCES accounts (id),
        expires_at BIGINT,
        batch_id TEXT NOT NULL,
        note TEXT,
        created_at TEXT NOT NULL,
        redeemed_at BIGINT,
        redeemed_account_id TEXT REFERENCES accounts (id),
        redeemed_key_id TEXT REFERENCES api_keys (id),
        revoked_at BIGINT
      );
      CREATE INDEX redemption_codes_by_created ON redemption_codes (created_at, id);
      CREATE INDEX redemption_codes_by_batch ON redemption_codes (batch_id);
