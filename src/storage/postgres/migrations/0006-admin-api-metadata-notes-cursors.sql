-- PostgreSQL migration 6: admin-api-metadata-notes-cursors. Shipped: never edit it; add the next number.
--
-- See the SQLite migration 6. Cursor pagination walks usage rows and ledger entries by their
-- insertion sequence (seq, id), newest first, overall and per key.

      ALTER TABLE api_keys ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
      ALTER TABLE ledger_entries ADD COLUMN note TEXT;
      CREATE INDEX usage_records_by_seq ON usage_records (seq);
      CREATE INDEX usage_records_by_key_seq ON usage_records (key_id, seq);
      CREATE INDEX ledger_entries_by_key_id ON ledger_entries (key_id, id);
    