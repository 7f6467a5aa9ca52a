-- SQLite migration 12: redemption codes. Shipped: never edit it; add the next number.
--
-- docs/adr/0051-redemption-codes.md: a code is a bearer voucher for `amount` nano-dollars. Only its
-- SHA-256 and its first characters are stored. A code is redeemed by one conditional UPDATE (unredeemed,
-- unrevoked, unexpired, account restriction met) in the same transaction as the account's top-up entry
-- (request id 'redeem_' || id), so it credits once however many redeem it at once.

      CREATE TABLE redemption_codes (
        id TEXT PRIMARY KEY,
        code_hash TEXT NOT NULL UNIQUE,       -- SHA-256 of the code (tgr-...), hex
        code_prefix TEXT NOT NULL,            -- its first characters, for listings
        amount INTEGER NOT NULL CHECK (amount > 0),   -- nano-dollars
        account_id TEXT REFERENCES accounts (id),     -- only this account may redeem it; NULL: any
        expires_at INTEGER,                   -- epoch ms; NULL: never
        batch_id TEXT NOT NULL,
        note TEXT,
        created_at TEXT NOT NULL,
        redeemed_at INTEGER,                  -- epoch ms; NULL: not yet
        redeemed_account_id TEXT REFERENCES accounts (id),
        redeemed_key_id TEXT REFERENCES api_keys (id),   -- the key that was sent, if one was
        revoked_at INTEGER                    -- epoch ms; NULL: not revoked
      ) STRICT;
      CREATE INDEX redemption_codes_by_created ON redemption_codes (created_at, id);
      CREATE INDEX redemption_codes_by_batch ON redemption_codes (batch_id);
