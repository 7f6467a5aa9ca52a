-- SQLite migration 6: admin-api-metadata-notes-cursors. Shipped: never edit it; add the next number.
--
-- The admin API (product.md §9): free-form metadata on a key, a note on top-ups and adjustments (the
-- adjust reason), and an index that serves one key's usage newest first by insertion order (an index
-- on key_id alone ends in the rowid, which is that order) for cursor pagination.

      ALTER TABLE api_keys ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';   -- JSON object of strings
      ALTER TABLE ledger_entries ADD COLUMN note TEXT;
      CREATE INDEX usage_records_by_key ON usage_records (key_id);
    