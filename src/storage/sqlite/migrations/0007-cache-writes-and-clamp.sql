-- SQLite migration 7: cache-writes-and-clamp. Shipped: never edit it; add the next number.
--
-- Cache-write tokens per request (priced apart from input, product.md §13), and the key's choice to
-- have an unaffordable max_tokens lowered instead of refused (clamp).

      ALTER TABLE usage_records ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE api_keys ADD COLUMN clamp_max_tokens INTEGER NOT NULL DEFAULT 0;
    