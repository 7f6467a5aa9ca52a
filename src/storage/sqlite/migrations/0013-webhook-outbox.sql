-- SQLite migration 13: the webhook outbox. Shipped: never edit it; add the next number.
--
-- Signed webhooks out (docs/adr/0052-signed-webhooks.md). Each event is a row written in the same
-- transaction as the change that causes it (a revoke, a credit carrying a payment event, the notification
-- scanner flipping a marker), so no event is lost on a crash and none exists without its change. A
-- deliverer leases due rows (a conditional UPDATE of lease_owner/lease_until: one process at a time),
-- posts them to the configured endpoints that want their type, and records the outcome: delivered, a
-- retry at next_attempt_at (exponential back-off from retry_from, for 24 h), or failed. delivered_to
-- lists the endpoint URLs that answered 2xx, so a retry goes only to those that did not.
--
-- The markers the scanner flips, each in the transaction that writes its event: an account's
-- balance_low_notified (1 while its available balance is below its threshold and the event was written;
-- back to 0 when it rises above: re-armed); budget_notified_period on accounts and keys (the budget
-- period whose budget.reached was written); a key's expiry_notified (7: the 7-day notice written, 1: the
-- 1-day one).

      CREATE TABLE webhook_outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        message_id TEXT NOT NULL UNIQUE,        -- the webhook-id header: the same on every attempt
        type TEXT NOT NULL,
        data TEXT NOT NULL,                     -- JSON object: the payload's `data`
        dedupe_key TEXT UNIQUE,                 -- an event that must be written once (NULL: no such rule)
        created_at INTEGER NOT NULL,            -- epoch ms: the payload's `timestamp`
        status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed', 'skipped')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        retry_from INTEGER NOT NULL,            -- back-off and the 24 h give-up count from here (a resend resets it)
        lease_owner TEXT,
        lease_until INTEGER,
        delivered_to TEXT NOT NULL DEFAULT '[]',
        last_error TEXT,
        last_attempt_at INTEGER,
        delivered_at INTEGER
      ) STRICT;
      CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX webhook_outbox_by_type ON webhook_outbox (type, id);
      CREATE INDEX webhook_outbox_by_status ON webhook_outbox (status, id);

      ALTER TABLE accounts ADD COLUMN balance_low_notified INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE accounts ADD COLUMN budget_notified_period INTEGER;
      ALTER TABLE api_keys ADD COLUMN budget_notified_period INTEGER;
      ALTER TABLE api_keys ADD COLUMN expiry_notified INTEGER NOT NULL DEFAULT 0;
