-- PostgreSQL migration 17: the webhook outbox. Shipped: never edit it; add the next number.
--
-- See the SQLite migration 13 (docs/adr/0052-signed-webhooks.md): events written in the transaction of
-- the change that causes them; a deliverer leases due rows with FOR UPDATE SKIP LOCKED (so several
-- gateways on one database never take the same row) and records each attempt; the scanner's markers on
-- accounts and keys.

      CREATE TABLE webhook_outbox (
        id BIGSERIAL PRIMARY KEY,
        message_id TEXT NOT NULL UNIQUE,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        dedupe_key TEXT UNIQUE,
        created_at BIGINT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed', 'skipped')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at BIGINT NOT NULL,
        retry_from BIGINT NOT NULL,
        lease_owner TEXT,
        lease_until BIGINT,
        delivered_to TEXT NOT NULL DEFAULT '[]',
        last_error TEXT,
        last_attempt_at BIGINT,
        delivered_at BIGINT
      );
      CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX webhook_outbox_by_type ON webhook_outbox (type, id);
      CREATE INDEX webhook_outbox_by_status ON webhook_outbox (status, id);

      ALTER TABLE accounts ADD COLUMN balance_low_notified INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE accounts ADD COLUMN budget_notified_period BIGINT;
      ALTER TABLE api_keys ADD COLUMN budget_notified_period BIGINT;
      ALTER TABLE api_keys ADD COLUMN expiry_notified INTEGER NOT NULL DEFAULT 0;
