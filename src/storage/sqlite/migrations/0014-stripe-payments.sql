-- SQLite migration 14: Stripe payments. Shipped: never edit it; add the next number.
--
-- Stripe Checkout top-ups (docs/adr/0050-stripe-top-ups.md): one row per paid Checkout Session, written in
-- the transaction that credits its account, so a refund or a dispute (which names the PaymentIntent) finds
-- the account; and one row per refund or dispute taken back, with what the balance could not cover.

      CREATE TABLE stripe_payments (
        session_id TEXT PRIMARY KEY,          -- cs_...: the credit's ledger request id is 'stripe:' || session_id
        payment_intent TEXT UNIQUE,           -- pi_...: what a charge and a dispute name
        account_id TEXT NOT NULL REFERENCES accounts (id),
        key_id TEXT,                          -- the key that started the checkout, if a key did
        amount INTEGER NOT NULL,              -- nano-dollars credited (amount_total cents × 10^7)
        refunded INTEGER NOT NULL DEFAULT 0,  -- nano-dollars Stripe refunded (cumulative, as Stripe says)
        disputed INTEGER NOT NULL DEFAULT 0,  -- nano-dollars disputed
        unrecovered INTEGER NOT NULL DEFAULT 0, -- of those, nano-dollars the available balance could not cover
        created_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX stripe_payments_by_account ON stripe_payments (account_id, created_at, session_id);
      CREATE INDEX stripe_payments_by_created ON stripe_payments (created_at, session_id);

      CREATE TABLE stripe_reversals (
        id TEXT PRIMARY KEY,                  -- 'refund:<charge>:<cumulative cents>' or 'dispute:<dispute id>'
        session_id TEXT NOT NULL REFERENCES stripe_payments (session_id),
        kind TEXT NOT NULL CHECK (kind IN ('refund', 'dispute')),
        amount INTEGER NOT NULL,              -- nano-dollars Stripe took back
        debited INTEGER NOT NULL,             -- nano-dollars the adjustment took from the balance
        created_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX stripe_reversals_by_session ON stripe_reversals (session_id);
