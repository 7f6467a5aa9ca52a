// Numbered PostgreSQL migrations: the same tables and columns as the SQLite ones (sqlite/migrations.ts),
// in PostgreSQL's types. Never edit one that has shipped; add the next number to both dialects.
// Money columns are BIGINT nano-dollars; times are epoch milliseconds unless named *_at TEXT.
import type { Migration } from '../sqlite/migrations.js';

export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'keys-holds-ledger-usage',
    sql: `
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        prefix TEXT NOT NULL,
        secret_hash TEXT NOT NULL UNIQUE,
        balance BIGINT NOT NULL DEFAULT 0,    -- cached: Σtopup + Σadjust − Σcapture
        held BIGINT NOT NULL DEFAULT 0,       -- cached: Σhold − Σrelease
        spent BIGINT NOT NULL DEFAULT 0,      -- cached: Σcapture
        allowed_models TEXT NOT NULL,         -- JSON array of model ids, or '*'
        status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
        created_at TEXT NOT NULL,
        revoked_at TEXT
      );

      CREATE TABLE holds (
        request_id TEXT PRIMARY KEY,
        key_id TEXT NOT NULL REFERENCES api_keys (id),
        amount BIGINT NOT NULL CHECK (amount >= 0),
        status TEXT NOT NULL CHECK (status IN ('active', 'captured', 'released', 'expired')),
        expires_at BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        settled_at BIGINT
      );
      CREATE INDEX holds_active_by_expiry ON holds (expires_at) WHERE status = 'active';

      CREATE TABLE ledger_entries (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        key_id TEXT NOT NULL REFERENCES api_keys (id),
        request_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('topup', 'hold', 'capture', 'release', 'adjust')),
        amount BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        UNIQUE (request_id, kind)
      );
      CREATE INDEX ledger_entries_by_key ON ledger_entries (key_id);

      CREATE TABLE usage_records (
        seq BIGINT GENERATED ALWAYS AS IDENTITY,  -- insertion order (SQLite's rowid)
        request_id TEXT PRIMARY KEY,
        created_at BIGINT NOT NULL,
        key_id TEXT NOT NULL REFERENCES api_keys (id),
        model TEXT NOT NULL,
        provider TEXT NOT NULL,
        upstream_model TEXT NOT NULL,
        status INTEGER NOT NULL,
        input_tokens INTEGER NOT NULL,
        cached_input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        reasoning_tokens INTEGER NOT NULL,
        cost BIGINT NOT NULL,
        usage_source TEXT NOT NULL CHECK (usage_source IN ('upstream', 'estimated')),
        attempts TEXT NOT NULL                -- JSON array of {provider, status, duration_ms}
      );
      CREATE INDEX usage_records_by_time ON usage_records (created_at);
      CREATE INDEX usage_records_by_key_time ON usage_records (key_id, created_at);

      -- Settlement and release run server-side, one round trip each: the hold row is locked first, then
      -- the key row, exactly as sqlite/ledger-store.ts does it, and the key's row lock is held for one
      -- statement's worth of work instead of a client's round trips (docs/adr/0012-postgresql.md).
      CREATE FUNCTION tollgate_close_hold(p_request_id TEXT, p_final TEXT, p_cost BIGINT, p_now BIGINT)
      RETURNS TEXT LANGUAGE plpgsql AS $$
      DECLARE
        h holds%ROWTYPE;
      BEGIN
        SELECT * INTO h FROM holds WHERE request_id = p_request_id FOR UPDATE;
        IF NOT FOUND THEN RETURN 'missing'; END IF;
        IF h.status NOT IN ('active', 'expired') THEN RETURN 'duplicate'; END IF;
        IF p_final = 'released' AND h.status = 'expired' THEN RETURN 'expired'; END IF;
        UPDATE holds SET status = p_final, settled_at = p_now WHERE request_id = p_request_id;
        IF h.status = 'active' THEN
          INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at)
            VALUES (h.key_id, p_request_id, 'release', h.amount, p_now);
        END IF;
        IF p_final = 'captured' THEN
          INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at)
            VALUES (h.key_id, p_request_id, 'capture', p_cost, p_now);
          UPDATE api_keys SET balance = balance - p_cost, spent = spent + p_cost,
            held = held - CASE WHEN h.status = 'active' THEN h.amount ELSE 0 END
            WHERE id = h.key_id;
          RETURN CASE WHEN h.status = 'active' THEN 'captured' ELSE 'late' END;
        END IF;
        UPDATE api_keys SET held = held - h.amount WHERE id = h.key_id;
        RETURN 'released';
      END $$;
    `,
  },
  {
    version: 2,
    name: 'entry-seq-for-renewed-holds',
    // See the SQLite migration 2. Settlement of an expired hold ("late") now goes through admission, and
    // renewing a hold re-admits it when the sweeper expired it while its request still ran
    // (docs/adr/0003-ledger-and-holds.md).
    sql: `
      ALTER TABLE holds ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE ledger_entries ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_request_id_kind_key;
      ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_request_id_kind_seq_key UNIQUE (request_id, kind, seq);

      DROP FUNCTION tollgate_close_hold(TEXT, TEXT, BIGINT, BIGINT);
      CREATE FUNCTION tollgate_close_hold(p_request_id TEXT, p_final TEXT, p_cost BIGINT, p_now BIGINT,
        OUT outcome TEXT, OUT charged BIGINT)
      LANGUAGE plpgsql AS $$
      DECLARE
        h holds%ROWTYPE;
        available BIGINT;
      BEGIN
        charged := 0;
        SELECT * INTO h FROM holds WHERE request_id = p_request_id FOR UPDATE;
        IF NOT FOUND THEN outcome := 'missing'; RETURN; END IF;
        IF h.status NOT IN ('active', 'expired') THEN outcome := 'duplicate'; RETURN; END IF;
        IF p_final = 'released' AND h.status = 'expired' THEN outcome := 'expired'; RETURN; END IF;
        UPDATE holds SET status = p_final, settled_at = p_now WHERE request_id = p_request_id;
        IF h.status = 'active' THEN
          INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at, seq)
            VALUES (h.key_id, p_request_id, 'release', h.amount, p_now, h.seq);
          IF p_final = 'released' THEN
            UPDATE api_keys SET held = held - h.amount WHERE id = h.key_id;
            outcome := 'released';
            RETURN;
          END IF;
          charged := p_cost;
          outcome := 'captured';
        ELSE
          -- Late: the hold was released by a sweeper and its money may be spent. Admitted again for what
          -- it covered (the cost above it is the usual overage), else only what is available is charged.
          SELECT balance - held INTO available FROM api_keys WHERE id = h.key_id FOR UPDATE;
          IF available >= LEAST(p_cost, h.amount) THEN
            charged := p_cost;
            outcome := 'late';
          ELSE
            charged := GREATEST(0, LEAST(p_cost, available));
            outcome := 'late-capped';
          END IF;
        END IF;
        INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at)
          VALUES (h.key_id, p_request_id, 'capture', charged, p_now);
        UPDATE api_keys SET balance = balance - charged, spent = spent + charged,
          held = held - CASE WHEN h.status = 'active' THEN h.amount ELSE 0 END
          WHERE id = h.key_id;
      END $$;

      -- Keeps a live request's hold: pushes an active hold's expiry forward, or re-admits (atomically, like
      -- a new hold) one that a sweeper expired while the request still ran.
      CREATE FUNCTION tollgate_renew_hold(p_request_id TEXT, p_expires_at BIGINT, p_now BIGINT,
        OUT outcome TEXT, OUT available BIGINT, OUT key_active BOOLEAN)
      LANGUAGE plpgsql AS $$
      DECLARE
        h holds%ROWTYPE;
      BEGIN
        SELECT * INTO h FROM holds WHERE request_id = p_request_id FOR UPDATE;
        IF NOT FOUND THEN outcome := 'missing'; RETURN; END IF;
        IF h.status = 'active' THEN
          UPDATE holds SET expires_at = p_expires_at WHERE request_id = p_request_id;
          outcome := 'extended';
          RETURN;
        END IF;
        IF h.status <> 'expired' THEN outcome := 'closed'; RETURN; END IF;
        UPDATE api_keys SET held = held + h.amount
          WHERE id = h.key_id AND status = 'active' AND balance - held >= h.amount;
        IF NOT FOUND THEN
          SELECT k.balance - k.held, k.status = 'active' INTO available, key_active FROM api_keys k WHERE k.id = h.key_id;
          outcome := 'refused';
          RETURN;
        END IF;
        UPDATE holds SET status = 'active', seq = h.seq + 1, expires_at = p_expires_at, settled_at = NULL
          WHERE request_id = p_request_id;
        INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at, seq)
          VALUES (h.key_id, p_request_id, 'hold', h.amount, p_now, h.seq + 1);
        outcome := 'readmitted';
      END $$;
    `,
  },
  {
    version: 3,
    name: 'key-limits-budgets-expiry',
    // See the SQLite migration 3. Settlement and renewal now keep the budget's period spend, and renewal
    // (a re-admission) and late captures check the budget as admission does.
    sql: `
      ALTER TABLE api_keys ADD COLUMN rpm INTEGER;
      ALTER TABLE api_keys ADD COLUMN tpm INTEGER;
      ALTER TABLE api_keys ADD COLUMN max_concurrent INTEGER;
      ALTER TABLE api_keys ADD COLUMN budget BIGINT;
      ALTER TABLE api_keys ADD COLUMN budget_period TEXT CHECK (budget_period IN ('day', 'week', 'month'));
      ALTER TABLE api_keys ADD COLUMN expires_at BIGINT;
      ALTER TABLE api_keys ADD COLUMN budget_spent BIGINT NOT NULL DEFAULT 0;
      ALTER TABLE api_keys ADD COLUMN budget_period_start BIGINT NOT NULL DEFAULT 0;

      DROP FUNCTION tollgate_close_hold(TEXT, TEXT, BIGINT, BIGINT);
      CREATE FUNCTION tollgate_close_hold(p_request_id TEXT, p_final TEXT, p_cost BIGINT, p_now BIGINT,
        p_period_start BIGINT, p_budget BIGINT, OUT outcome TEXT, OUT charged BIGINT)
      LANGUAGE plpgsql AS $$
      DECLARE
        h holds%ROWTYPE;
        k api_keys%ROWTYPE;
        period_spent BIGINT;
        covered BIGINT;
      BEGIN
        charged := 0;
        SELECT * INTO h FROM holds WHERE request_id = p_request_id FOR UPDATE;
        IF NOT FOUND THEN outcome := 'missing'; RETURN; END IF;
        IF h.status NOT IN ('active', 'expired') THEN outcome := 'duplicate'; RETURN; END IF;
        IF p_final = 'released' AND h.status = 'expired' THEN outcome := 'expired'; RETURN; END IF;
        UPDATE holds SET status = p_final, settled_at = p_now WHERE request_id = p_request_id;
        IF h.status = 'active' THEN
          INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at, seq)
            VALUES (h.key_id, p_request_id, 'release', h.amount, p_now, h.seq);
          IF p_final = 'released' THEN
            UPDATE api_keys SET held = held - h.amount WHERE id = h.key_id;
            outcome := 'released';
            RETURN;
          END IF;
          charged := p_cost;
          outcome := 'captured';
        ELSE
          -- Late (docs/adr/0003): admitted again for what the hold covered, balance and budget, or capped.
          SELECT * INTO k FROM api_keys WHERE id = h.key_id FOR UPDATE;
          period_spent := CASE WHEN k.budget_period_start = p_period_start THEN k.budget_spent ELSE 0 END;
          covered := LEAST(p_cost, h.amount);
          IF k.balance - k.held >= covered AND (p_budget IS NULL OR period_spent + k.held + covered <= p_budget) THEN
            charged := p_cost;
            outcome := 'late';
          ELSE
            charged := GREATEST(0, LEAST(p_cost, k.balance - k.held,
              CASE WHEN p_budget IS NULL THEN p_cost ELSE p_budget - period_spent - k.held END));
            outcome := 'late-capped';
          END IF;
        END IF;
        INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at)
          VALUES (h.key_id, p_request_id, 'capture', charged, p_now);
        UPDATE api_keys SET balance = balance - charged, spent = spent + charged,
          held = held - CASE WHEN h.status = 'active' THEN h.amount ELSE 0 END,
          budget_spent = CASE WHEN budget_period_start = p_period_start THEN budget_spent + charged ELSE charged END,
          budget_period_start = p_period_start
          WHERE id = h.key_id;
      END $$;

      DROP FUNCTION tollgate_renew_hold(TEXT, BIGINT, BIGINT);
      -- Refused: the hold's amount and the key's row as admission saw it (refusalOf in rows.ts explains it).
      CREATE FUNCTION tollgate_renew_hold(p_request_id TEXT, p_expires_at BIGINT, p_now BIGINT,
        p_period_start BIGINT, p_budget BIGINT, OUT outcome TEXT, OUT hold_amount BIGINT, OUT k_balance BIGINT, OUT k_held BIGINT,
        OUT k_status TEXT, OUT k_expires_at BIGINT, OUT k_budget_spent BIGINT, OUT k_budget_period_start BIGINT)
      LANGUAGE plpgsql AS $$
      DECLARE
        h holds%ROWTYPE;
      BEGIN
        SELECT * INTO h FROM holds WHERE request_id = p_request_id FOR UPDATE;
        IF NOT FOUND THEN outcome := 'missing'; RETURN; END IF;
        IF h.status = 'active' THEN
          UPDATE holds SET expires_at = p_expires_at WHERE request_id = p_request_id;
          outcome := 'extended';
          RETURN;
        END IF;
        IF h.status <> 'expired' THEN outcome := 'closed'; RETURN; END IF;
        -- The admission of a new hold (rows.ts SHARED_SQL.admit), for the expired hold's amount.
        UPDATE api_keys SET held = held + h.amount,
            budget_spent = CASE WHEN budget_period_start = p_period_start THEN budget_spent ELSE 0 END,
            budget_period_start = p_period_start
          WHERE id = h.key_id AND status = 'active' AND (expires_at IS NULL OR expires_at > p_now)
            AND balance - held >= h.amount
            AND (p_budget IS NULL
              OR CASE WHEN budget_period_start = p_period_start THEN budget_spent ELSE 0 END + held + h.amount <= p_budget);
        IF NOT FOUND THEN
          SELECT k.balance, k.held, k.status, k.expires_at, k.budget_spent, k.budget_period_start
            INTO k_balance, k_held, k_status, k_expires_at, k_budget_spent, k_budget_period_start FROM api_keys k WHERE k.id = h.key_id;
          hold_amount := h.amount;
          outcome := 'refused';
          RETURN;
        END IF;
        UPDATE holds SET status = 'active', seq = h.seq + 1, expires_at = p_expires_at, settled_at = NULL
          WHERE request_id = p_request_id;
        INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at, seq)
          VALUES (h.key_id, p_request_id, 'hold', h.amount, p_now, h.seq + 1);
        outcome := 'readmitted';
      END $$;
    `,
  },
  {
    version: 4,
    name: 'idempotency-keys-and-growing-holds',
    // See the SQLite migration 4; and growing a live hold by a step through the same admission as a new
    // hold (product.md §13), locking the hold row first, then the key row, as every ledger write does.
    sql: `
      CREATE TABLE idempotency_keys (
        scope TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('running', 'done')),
        lease_until BIGINT NOT NULL,
        status INTEGER,
        content_type TEXT,
        body TEXT,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        PRIMARY KEY (scope, idempotency_key)
      );
      CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);

      CREATE FUNCTION tollgate_grow_hold(p_request_id TEXT, p_amount BIGINT, p_now BIGINT, p_period_start BIGINT,
        p_budget BIGINT, OUT outcome TEXT, OUT k_balance BIGINT, OUT k_held BIGINT, OUT k_status TEXT,
        OUT k_expires_at BIGINT, OUT k_budget_spent BIGINT, OUT k_budget_period_start BIGINT)
      LANGUAGE plpgsql AS $$
      DECLARE
        h holds%ROWTYPE;
      BEGIN
        SELECT * INTO h FROM holds WHERE request_id = p_request_id FOR UPDATE;
        IF NOT FOUND THEN outcome := 'missing'; RETURN; END IF;
        IF h.status <> 'active' THEN outcome := CASE WHEN h.status = 'expired' THEN 'expired' ELSE 'closed' END; RETURN; END IF;
        -- The admission of a new hold (rows.ts SHARED_SQL.admit), for the step.
        UPDATE api_keys SET held = held + p_amount,
            budget_spent = CASE WHEN budget_period_start = p_period_start THEN budget_spent ELSE 0 END,
            budget_period_start = p_period_start
          WHERE id = h.key_id AND status = 'active' AND (expires_at IS NULL OR expires_at > p_now)
            AND balance - held >= p_amount
            AND (p_budget IS NULL
              OR CASE WHEN budget_period_start = p_period_start THEN budget_spent ELSE 0 END + held + p_amount <= p_budget);
        IF NOT FOUND THEN
          SELECT k.balance, k.held, k.status, k.expires_at, k.budget_spent, k.budget_period_start
            INTO k_balance, k_held, k_status, k_expires_at, k_budget_spent, k_budget_period_start FROM api_keys k WHERE k.id = h.key_id;
          outcome := 'refused';
          RETURN;
        END IF;
        UPDATE holds SET amount = amount + p_amount, seq = h.seq + 1 WHERE request_id = p_request_id;
        INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at, seq)
          VALUES (h.key_id, p_request_id, 'hold', p_amount, p_now, h.seq + 1);
        outcome := 'grown';
      END $$;
    `,
  },
  {
    version: 5,
    name: 'cache-writes-and-clamp',
    // See the SQLite migration 5.
    sql: `
      ALTER TABLE usage_records ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE api_keys ADD COLUMN clamp_max_tokens INTEGER NOT NULL DEFAULT 0;
    `,
  },
];
