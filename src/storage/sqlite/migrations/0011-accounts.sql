-- SQLite migration 11: accounts. Shipped: never edit it; add the next number.
--
-- Accounts own the money; keys carry caps (docs/adr/0047-accounts.md). Each existing key gets a personal
-- account ('acct_' + its id's hex) holding its balance, held and spent; every ledger entry names the
-- account it moved (key_id stays, NULL only for an account's own top-up or adjustment, so the table is
-- rebuilt with its rows and ids). A key keeps held and spent, its own figures, for its credit limit
-- and budget; its balance column goes: a key has no money of its own.
--
-- SQLite cannot add a NOT NULL column with a foreign key to a table with rows, nor rebuild api_keys
-- (four tables reference it): two triggers refuse a key without an account instead.

      CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        balance INTEGER NOT NULL DEFAULT 0,   -- cached: Σtopup + Σadjust − Σcapture of its entries
        held INTEGER NOT NULL DEFAULT 0,      -- cached: Σhold − Σrelease
        spent INTEGER NOT NULL DEFAULT 0,     -- cached: Σcapture
        status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
        budget INTEGER,                       -- nano-dollars per period; NULL: none
        budget_period TEXT CHECK (budget_period IN ('day', 'week', 'month')),
        budget_spent INTEGER NOT NULL DEFAULT 0,
        budget_period_start INTEGER NOT NULL DEFAULT 0,
        metadata TEXT NOT NULL DEFAULT '{}',
        allowed_models TEXT NOT NULL DEFAULT '*',  -- what the account token may give its own keys: JSON array, or '*'
        personal INTEGER NOT NULL DEFAULT 0,  -- made for one key by `keys create` without --account
        token_prefix TEXT,                    -- the self-service account token (tga-...): its first characters
        token_hash TEXT UNIQUE,               -- and its SHA-256; NULL: none issued
        created_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX accounts_by_created ON accounts (created_at, id);

      INSERT INTO accounts (id, name, balance, held, spent, personal, created_at)
        SELECT CASE WHEN id LIKE 'key\_%' ESCAPE '\' THEN 'acct_' || substr(id, 5) ELSE 'acct_' || id END,
          name, balance, held, spent, 1, created_at
        FROM api_keys ORDER BY created_at, id;

      ALTER TABLE api_keys ADD COLUMN account_id TEXT REFERENCES accounts (id);
      ALTER TABLE api_keys ADD COLUMN credit_limit INTEGER;   -- nano-dollars the key may ever spend; NULL: none
      UPDATE api_keys SET account_id = CASE WHEN id LIKE 'key\_%' ESCAPE '\' THEN 'acct_' || substr(id, 5) ELSE 'acct_' || id END;
      ALTER TABLE api_keys DROP COLUMN balance;
      CREATE INDEX api_keys_by_account ON api_keys (account_id);
      CREATE TRIGGER api_keys_need_an_account BEFORE INSERT ON api_keys WHEN NEW.account_id IS NULL
        BEGIN SELECT RAISE(ABORT, 'NOT NULL constraint failed: api_keys.account_id'); END;
      CREATE TRIGGER api_keys_keep_an_account BEFORE UPDATE OF account_id ON api_keys WHEN NEW.account_id IS NULL
        BEGIN SELECT RAISE(ABORT, 'NOT NULL constraint failed: api_keys.account_id'); END;

      CREATE TABLE ledger_entries_v3 (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        key_id TEXT REFERENCES api_keys (id),
        request_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('topup', 'hold', 'capture', 'release', 'adjust')),
        amount INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        seq INTEGER NOT NULL DEFAULT 0,
        note TEXT,
        UNIQUE (request_id, kind, seq)
      ) STRICT;
      INSERT INTO ledger_entries_v3 (id, account_id, key_id, request_id, kind, amount, created_at, seq, note)
        SELECT e.id, k.account_id, e.key_id, e.request_id, e.kind, e.amount, e.created_at, e.seq, e.note
        FROM ledger_entries e JOIN api_keys k ON k.id = e.key_id ORDER BY e.id;
      DROP TABLE ledger_entries;
      ALTER TABLE ledger_entries_v3 RENAME TO ledger_entries;
      CREATE INDEX ledger_entries_by_key ON ledger_entries (key_id);
      CREATE INDEX ledger_entries_by_account ON ledger_entries (account_id);
