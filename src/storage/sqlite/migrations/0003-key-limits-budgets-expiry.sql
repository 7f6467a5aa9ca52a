-- SQLite migration 3: key-limits-budgets-expiry. Shipped: never edit it; add the next number.
--
-- Per-key limits (product.md §8); NULL = the key has none of its own (the config's `limits:` apply).
-- The budget's spend is counted per period: budget_spent is what was captured in the period that began
-- at budget_period_start (a new period starts it at 0 again, on the key's next admission or capture).

      ALTER TABLE api_keys ADD COLUMN rpm INTEGER;
      ALTER TABLE api_keys ADD COLUMN tpm INTEGER;
      ALTER TABLE api_keys ADD COLUMN max_concurrent INTEGER;
      ALTER TABLE api_keys ADD COLUMN budget INTEGER;                 -- nano-dollars per period
      ALTER TABLE api_keys ADD COLUMN budget_period TEXT CHECK (budget_period IN ('day', 'week', 'month'));
      ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;             -- epoch ms; the key answers 401 after it
      ALTER TABLE api_keys ADD COLUMN budget_spent INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE api_keys ADD COLUMN budget_period_start INTEGER NOT NULL DEFAULT 0;
    