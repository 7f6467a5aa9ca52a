-- SQLite migration 4: idempotency-keys. Shipped: never edit it; add the next number.
--
-- Idempotency-Key records (admin POSTs, chat and embeddings): one per (scope, key). A running record
-- whose lease passed was abandoned (its process died) and may be claimed again; a done one replays
-- its recorded answer (body NULL: too large to keep) until expires_at.

      CREATE TABLE idempotency_keys (
        scope TEXT NOT NULL,                -- whose keys these are: 'admin', or 'key:<api key id>'
        idempotency_key TEXT NOT NULL,
        request_hash TEXT NOT NULL,         -- SHA-256 of what makes two requests the same
        state TEXT NOT NULL CHECK (state IN ('running', 'done')),
        lease_until INTEGER NOT NULL,       -- epoch ms
        status INTEGER,
        content_type TEXT,
        body TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (scope, idempotency_key)
      ) STRICT;
      CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);
    