-- SQLite migration 2: entry-seq-for-renewed-holds. Shipped: never edit it; add the next number.
--
-- A request may hold more than once (a hold the sweeper expired while its request ran is re-admitted;
-- growing holds add steps): `seq` numbers the entries of one kind for one request. SQLite cannot drop
-- the old UNIQUE (request_id, kind), so the table is rebuilt with its rows and ids.

      ALTER TABLE holds ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;  -- seq of this hold's latest 'hold' entry

      CREATE TABLE ledger_entries_v2 (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        key_id TEXT NOT NULL REFERENCES api_keys (id),
        request_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('topup', 'hold', 'capture', 'release', 'adjust')),
        amount INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        seq INTEGER NOT NULL DEFAULT 0,
        UNIQUE (request_id, kind, seq)
      ) STRICT;
      INSERT INTO ledger_entries_v2 (id, key_id, request_id, kind, amount, created_at)
        SELECT id, key_id, request_id, kind, amount, created_at FROM ledger_entries ORDER BY id;
      DROP TABLE ledger_entries;
      ALTER TABLE ledger_entries_v2 RENAME TO ledger_entries;
      CREATE INDEX ledger_entries_by_key ON ledger_entries (key_id);
    