-- SQLite migration 5: ledger-batches. Shipped: never edit it; add the next number.
--
-- PostgreSQL's group commit records each committed batch's answers so that a batch whose connection
-- dropped is retried exactly once (docs/adr/0009-group-commit.md). SQLite's batches cannot be in
-- doubt (the driver is in-process); the table exists so both dialects keep the same tables.

      CREATE TABLE ledger_batches (
        id TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,        -- epoch ms
        results TEXT                        -- JSON: one answer per operation, in order
      ) STRICT;
      CREATE INDEX ledger_batches_by_time ON ledger_batches (created_at);
    