-- PostgreSQL migration 18: Stripe payments. Shipped: never edit it; add the next number.
--
-- Stripe Checkout top-ups (docs/adr/0050-stripe-top-ups.md): one row per paid Checkout Session, written in
-- the transaction that credits its account, so a refund or a dispute (which names the PaymentIntent) finds
-- the account; and one row per refund or dispute taken back, with what the balance could not cover.

      CREATE TABLE stripe_payments (
        session_id TEXT PRIMARY KEY,
        payment_intent TEXT UNIQUE,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        key_id TEXT,
        amount BIGINT NOT NULL,
        refunded BIGINT NOT NULL DEFAULT 0,
        disputed BIGINT NOT NULL DEFAULT 0,
        unrecovered BIGINT NOT NULL DEFAULT 0,
        created_at BIGINT NOT NULL
      );
      CREATE INDEX stripe_payments_by_account ON stripe_payments (account_id, created_at, session_id);
      CREATE INDEX stripe_payments_by_created ON stripe_payments (created_at, session_id);

      CREATE TABLE stripe_reversals (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES stripe_payments (session_id),
        kind TEXT NOT NULL CHECK (kind IN ('refund', 'dispute')),
        amount BIGINT NOT NULL,
        debited BIGINT NOT NULL,
        created_at BIGINT NOT NULL
      );
      CREATE INDEX stripe_reversals_by_session ON stripe_reversals (session_id);
