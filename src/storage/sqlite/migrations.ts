// Numbered SQLite migrations. Never edit one that has shipped; add the next number.
// Money columns are INTEGER nano-dollars; times are epoch milliseconds unless named *_at TEXT.

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'keys-holds-ledger-usage',
    sql: `
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        prefix TEXT NOT NULL,
        secret_hash TEXT NOT NULL UNIQUE,
        balance INTEGER NOT NULL DEFAULT 0,   -- cached: Σtopup + Σadjust − Σcapture
        held INTEGER NOT NULL DEFAULT 0,      -- cached: Σhold − Σrelease
        spent INTEGER NOT NULL DEFAULT 0,     -- cached: Σcapture
        allowed_models TEXT NOT NULL,         -- JSON array of model ids, or '*'
        status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
        created_at TEXT NOT NULL,
        revoked_at TEXT
      ) STRICT;

      CREATE TABLE holds (
        request_id TEXT PRIMARY KEY,
        key_id TEXT NOT NULL REFERENCES api_keys (id),
        amount INTEGER NOT NULL CHECK (amount >= 0),
        status TEXT NOT NULL CHECK (status IN ('active', 'captured', 'released', 'expired')),
        expires_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        settled_at INTEGER
      ) STRICT;
      CREATE INDEX holds_active_by_expiry ON holds (expires_at) WHERE status = 'active';

      CREATE TABLE ledger_entries (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        key_id TEXT NOT NULL REFERENCES api_keys (id),
        request_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('topup', 'hold', 'capture', 'release', 'adjust')),
        amount INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        UNIQUE (request_id, kind)
      ) STRICT;
      CREATE INDEX ledger_entries_by_key ON ledger_entries (key_id);

      CREATE TABLE usage_records (
        request_id TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        key_id TEXT NOT NULL REFERENCES api_keys (id),
        model TEXT NOT NULL,
        provider TEXT NOT NULL,
        upstream_model TEXT NOT NULL,
        status INTEGER NOT NULL,
        input_tokens INTEGER NOT NULL,
        cached_input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        reasoning_tokens INTEGER NOT NULL,
        cost INTEGER NOT NULL,
        usage_source TEXT NOT NULL CHECK (usage_source IN ('upstream', 'estimated')),
        attempts TEXT NOT NULL                -- JSON array of {provider, status, duration_ms}
      ) STRICT;
      CREATE INDEX usage_records_by_time ON usage_records (created_at);
      CREATE INDEX usage_records_by_key_time ON usage_records (key_id, created_at);
    `,
  },
  {
    version: 2,
    name: 'entry-seq-for-renewed-holds',
    // A request may hold more than once (a hold the sweeper expired while its request ran is re-admitted;
    // growing holds add steps): `seq` numbers the entries of one kind for one request. SQLite cannot drop
    // the old UNIQUE (request_id, kind), so the table is rebuilt with its rows and ids.
    sql: `
      ALTER TABLE holds ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;  -- seq of this hold's latest 'hold' entry

      CREATE TABLE ledger_entries_v2 (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        key_id TEXT NOT NULL REFERENCES api_keys (id),
        request_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('topup', 'hold', 'capture', 'release', 'adjust')),
        amount INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        seq INTEGER NOT NULL DEFAULT 0,
        UNIQUE (request_id, kind, seq)
      ) STRICT;
      INSERT INTO ledger_entries_v2 (id, key_id, request_id, kind, amount, created_at)
        SELECT id, key_id, request_id, kind, amount, created_at FROM ledger_entries ORDER BY id;
      DROP TABLE ledger_entries;
      ALTER TABLE ledger_entries_v2 RENAME TO ledger_entries;
      CREATE INDEX ledger_entries_by_key ON ledger_entries (key_id);
    `,
  },
  {
    version: 3,
    name: 'key-limits-budgets-expiry',
    // Per-key limits (product.md §8); NULL = the key has none of its own (the config's `limits:` apply).
    // The budget's spend is counted per period: budget_spent is what was captured in the period that began
    // at budget_period_start (a new period starts it at 0 again, on the key's next admission or capture).
    sql: `
      ALTER TABLE api_keys ADD COLUMN rpm INTEGER;
      ALTER TABLE api_keys ADD COLUMN tpm INTEGER;
      ALTER TABLE api_keys ADD COLUMN max_concurrent INTEGER;
      ALTER TABLE api_keys ADD COLUMN budget INTEGER;                 -- nano-dollars per period
      ALTER TABLE api_keys ADD COLUMN budget_period TEXT CHECK (budget_period IN ('day', 'week', 'month'));
      ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;             -- epoch ms; the key answers 401 after it
      ALTER TABLE api_keys ADD COLUMN budget_spent INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE api_keys ADD COLUMN budget_period_start INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 4,
    name: 'idempotency-keys',
    // Idempotency-Key records (admin POSTs, chat and embeddings): one per (scope, key). A running record
    // whose lease passed was abandoned (its process died) and may be claimed again; a done one replays
    // its recorded answer (body NULL: too large to keep) until expires_at.
    sql: `
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
    `,
  },
  {
    version: 5,
    name: 'ledger-batches',
    // PostgreSQL's group commit records each committed batch's answers so that a batch whose connection
    // dropped is retried exactly once (docs/adr/0009-group-commit.md). SQLite's batches cannot be in
    // doubt (the driver is in-process); the table exists so both dialects keep the same tables.
    sql: `
      CREATE TABLE ledger_batches (
        id TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,        -- epoch ms
        results TEXT                        -- JSON: one answer per operation, in order
      ) STRICT;
      CREATE INDEX ledger_batches_by_time ON ledger_batches (created_at);
    `,
  },
  {
    version: 6,
    name: 'admin-api-metadata-notes-cursors',
    // The admin API (product.md §9): free-form metadata on a key, a note on top-ups and adjustments (the
    // adjust reason), and an index that serves one key's usage newest first by insertion order (an index
    // on key_id alone ends in the rowid, which is that order) for cursor pagination.
    sql: `
      ALTER TABLE api_keys ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';   -- JSON object of strings
      ALTER TABLE ledger_entries ADD COLUMN note TEXT;
      CREATE INDEX usage_records_by_key ON usage_records (key_id);
    `,
  },
  {
    version: 7,
    name: 'cache-writes-and-clamp',
    // Cache-write tokens per request (priced apart from input, product.md §13), and the key's choice to
    // have an unaffordable max_tokens lowered instead of refused (clamp).
    sql: `
      ALTER TABLE usage_records ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE api_keys ADD COLUMN clamp_max_tokens INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 8,
    name: 'a-usage-row-for-every-request',
    // Every request with a valid key leaves a usage row, also when it moved no money (refused, quoted,
    // failed before any upstream): model, provider and upstream model may be unknown (NULL) and the
    // usage source 'none'; and each row says which client API it came through, its error, latency and
    // time to first token (docs/adr/0028-a-row-for-every-request.md). SQLite cannot relax NOT NULL or a
    // CHECK in place, so the table is rebuilt with its rows and their rowids (the usage cursor).
    sql: `
      CREATE TABLE usage_records_v2 (
        request_id TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        key_id TEXT NOT NULL REFERENCES api_keys (id),
        model TEXT,
        provider TEXT,
        upstream_model TEXT,
        status INTEGER NOT NULL,
        input_tokens INTEGER NOT NULL,
        cached_input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        reasoning_tokens INTEGER NOT NULL,
        cost INTEGER NOT NULL,
        usage_source TEXT NOT NULL CHECK (usage_source IN ('upstream', 'estimated', 'none')),
        attempts TEXT NOT NULL,               -- JSON array of {provider, status, duration_ms}
        cache_write_tokens INTEGER NOT NULL DEFAULT 0,
        endpoint TEXT,                        -- the client API: chat | embeddings
        error_code TEXT,
        error_message TEXT,
        duration_ms INTEGER,
        first_token_ms INTEGER
      ) STRICT;
      INSERT INTO usage_records_v2 (rowid, request_id, created_at, key_id, model, provider, upstream_model, status,
          input_tokens, cached_input_tokens, output_tokens, reasoning_tokens, cost, usage_source, attempts, cache_write_tokens)
        SELECT rowid, request_id, created_at, key_id, model, provider, upstream_model, status,
          input_tokens, cached_input_tokens, output_tokens, reasoning_tokens, cost, usage_source, attempts, cache_write_tokens
        FROM usage_records ORDER BY rowid;
      DROP TABLE usage_records;
      ALTER TABLE usage_records_v2 RENAME TO usage_records;
      CREATE INDEX usage_records_by_time ON usage_records (created_at);
      CREATE INDEX usage_records_by_key_time ON usage_records (key_id, created_at);
      CREATE INDEX usage_records_by_key ON usage_records (key_id);

      -- Requests refused for want of a valid key, counted per minute (one row per minute, however many).
      CREATE TABLE unauthenticated_requests (
        minute INTEGER PRIMARY KEY,           -- the minute's start, epoch ms
        requests INTEGER NOT NULL
      ) STRICT;
    `,
  },
];
