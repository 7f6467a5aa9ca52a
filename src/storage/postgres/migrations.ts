// Numbered PostgreSQL migrations: the same tables and columns as the SQLite ones (sqlite/migrations.ts),
// in PostgreSQL's types. Never edit one that has shipped; add the next number to both dialects.
// Money columns are BIGINT nano-dollars; times are epoch milliseconds unless named *_at TEXT.
import type { Migration } from '../sqlite/migrations.js';

const SHIPPED: readonly Migration[] = [
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
    name: 'ledger-batches',
    // Group commit (docs/adr/0009-group-commit.md, 0012-postgresql.md): the ledger writes one gateway has
    // pending go to the database as ONE call of tollgate_ledger_batch, one transaction, applied in order.
    // ledger_batches records each committed batch's answers under the batch's id: a batch retried after its
    // connection dropped finds them and replays them instead of applying anything twice.
    sql: `
      CREATE TABLE ledger_batches (
        id TEXT PRIMARY KEY,
        created_at BIGINT NOT NULL,
        results JSONB
      );
      CREATE INDEX ledger_batches_by_time ON ledger_batches (created_at);

      -- Operations, in arrival order, as parallel arrays (element i of each is operation i):
      --   hold:    request id, key id, amount, expires_at, now, period start, budget
      --   settle:  request id, cost (p_amount), now, period start, budget, usage
      --   release: request id, now, usage (or null)
      --   renew:   request id, expires_at, now, period start, budget
      --   grow:    request id, amount, now, period start, budget
      -- Every key row the batch touches is locked first, in id order, then the hold rows: every writer with
      -- more than one row (this function, the sweeper) takes keys before holds, so batches of several
      -- gateways and the sweeper never deadlock. The locked keys' figures are then kept in variables: each
      -- operation is decided in order against them — the same rules as tollgate_close_hold,
      -- tollgate_renew_hold, tollgate_grow_hold and the admission UPDATE of rows.ts SHARED_SQL.admit, so
      -- exactly what one statement per request would decide — and each changed key row is written ONCE, at
      -- the end. (Updating a busy key's row once per operation made every later update, and every foreign-key
      -- check of a new hold or entry, walk that row's growing chain of versions: 0.2–0.3 ms per operation.)
      CREATE FUNCTION tollgate_ledger_batch(p_batch_id TEXT, p_now BIGINT, p_op TEXT[], p_request_id TEXT[],
        p_key_id TEXT[], p_amount BIGINT[], p_expires_at BIGINT[], p_op_now BIGINT[], p_period_start BIGINT[],
        p_budget BIGINT[], p_usage JSONB)
      RETURNS JSONB LANGUAGE plpgsql AS $$
      DECLARE
        v_results JSONB[] := '{}';
        v_r JSONB;
        v_u JSONB;
        v_amount BIGINT;
        v_charged BIGINT;
        v_spent BIGINT;
        v_covered BIGINT;
        v_outcome TEXT;
        v_admit BOOLEAN;
        j INT;
        h holds%ROWTYPE;
        -- The locked keys, by position: id, balance, held, spent, status, expires_at, budget_spent,
        -- budget_period_start, and whether the row must be written back.
        k_id TEXT[];
        k_balance BIGINT[];
        k_held BIGINT[];
        k_spent BIGINT[];
        k_status TEXT[];
        k_expires BIGINT[];
        k_bspent BIGINT[];
        k_bstart BIGINT[];
        k_dirty BOOLEAN[];
      BEGIN
        INSERT INTO ledger_batches (id, created_at) VALUES (p_batch_id, p_now) ON CONFLICT (id) DO NOTHING;
        IF NOT FOUND THEN
          -- A retry of a batch that committed (its connection dropped before the answer arrived).
          RETURN (SELECT results FROM ledger_batches WHERE id = p_batch_id);
        END IF;
        SELECT array_agg(id ORDER BY id), array_agg(balance ORDER BY id), array_agg(held ORDER BY id), array_agg(spent ORDER BY id),
            array_agg(status ORDER BY id), array_agg(expires_at ORDER BY id), array_agg(budget_spent ORDER BY id),
            array_agg(budget_period_start ORDER BY id), array_agg(false)
          INTO k_id, k_balance, k_held, k_spent, k_status, k_expires, k_bspent, k_bstart, k_dirty
          FROM (SELECT id, balance, held, spent, status, expires_at, budget_spent, budget_period_start FROM api_keys
            WHERE id IN (SELECT unnest(p_key_id) UNION SELECT key_id FROM holds WHERE request_id = ANY (p_request_id))
            ORDER BY id FOR UPDATE) locked;
        FOR i IN 1 .. COALESCE(array_length(p_op, 1), 0) LOOP
          v_r := NULL;
          v_admit := NULL;
          IF p_op[i] = 'hold' THEN
            j := array_position(k_id, p_key_id[i]);
            v_amount := p_amount[i];
            IF EXISTS (SELECT 1 FROM holds WHERE request_id = p_request_id[i]) THEN
              v_r := '{"o":"conflict"}';
            END IF;
          ELSE
            SELECT * INTO h FROM holds WHERE request_id = p_request_id[i] FOR UPDATE;
            IF NOT FOUND THEN
              v_r := '{"o":"missing"}';
            ELSE
              j := array_position(k_id, h.key_id);
            END IF;
          END IF;

          IF v_r IS NOT NULL THEN
            NULL;
          ELSIF p_op[i] = 'hold' OR p_op[i] = 'grow' OR p_op[i] = 'renew' THEN
            IF p_op[i] = 'grow' THEN
              v_amount := p_amount[i];
              IF h.status <> 'active' THEN
                v_r := jsonb_build_object('o', CASE WHEN h.status = 'expired' THEN 'expired' ELSE 'closed' END);
              END IF;
            ELSIF p_op[i] = 'renew' THEN
              v_amount := h.amount;
              IF h.status = 'active' THEN
                UPDATE holds SET expires_at = p_expires_at[i] WHERE request_id = p_request_id[i];
                v_r := '{"o":"extended"}';
              ELSIF h.status <> 'expired' THEN
                v_r := '{"o":"closed"}';
              END IF;
            END IF;
            IF v_r IS NULL THEN
              -- Admission (rows.ts SHARED_SQL.admit): an active, unexpired key whose available balance and
              -- budget (spent in the period + active holds + this) cover the amount.
              v_admit := j IS NOT NULL AND k_status[j] = 'active' AND (k_expires[j] IS NULL OR k_expires[j] > p_op_now[i]);
              IF v_admit THEN
                v_spent := CASE WHEN k_bstart[j] = p_period_start[i] THEN k_bspent[j] ELSE 0 END;
                v_admit := k_balance[j] - k_held[j] >= v_amount
                  AND (p_budget[i] IS NULL OR v_spent + k_held[j] + v_amount <= p_budget[i]);
              END IF;
              IF v_admit THEN
                k_held[j] := k_held[j] + v_amount;
                k_bspent[j] := v_spent;
                k_bstart[j] := p_period_start[i];
                k_dirty[j] := true;
                IF p_op[i] = 'hold' THEN
                  INSERT INTO holds (request_id, key_id, amount, status, expires_at, created_at)
                    VALUES (p_request_id[i], p_key_id[i], v_amount, 'active', p_expires_at[i], p_op_now[i]);
                  INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at)
                    VALUES (p_key_id[i], p_request_id[i], 'hold', v_amount, p_op_now[i]);
                  v_r := '{"o":"admitted"}';
                ELSIF p_op[i] = 'grow' THEN
                  UPDATE holds SET amount = amount + v_amount, seq = h.seq + 1 WHERE request_id = p_request_id[i];
                  INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at, seq)
                    VALUES (h.key_id, p_request_id[i], 'hold', v_amount, p_op_now[i], h.seq + 1);
                  v_r := '{"o":"grown"}';
                ELSE
                  UPDATE holds SET status = 'active', seq = h.seq + 1, expires_at = p_expires_at[i], settled_at = NULL
                    WHERE request_id = p_request_id[i];
                  INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at, seq)
                    VALUES (h.key_id, p_request_id[i], 'hold', v_amount, p_op_now[i], h.seq + 1);
                  v_r := '{"o":"readmitted"}';
                END IF;
              ELSE
                -- Refused: the key's figures as admission saw them (rows.ts refusalOf explains them).
                v_r := jsonb_build_object('o', 'refused', 'a', v_amount,
                  'k', CASE WHEN j IS NULL THEN NULL ELSE jsonb_build_object('balance', k_balance[j], 'held', k_held[j],
                    'status', k_status[j], 'expires_at', k_expires[j], 'budget_spent', k_bspent[j], 'budget_period_start', k_bstart[j]) END);
              END IF;
            END IF;
          ELSIF p_op[i] = 'settle' OR p_op[i] = 'release' THEN
            -- tollgate_close_hold's rules.
            v_charged := 0;
            IF h.status NOT IN ('active', 'expired') THEN
              v_outcome := 'duplicate';
            ELSIF p_op[i] = 'release' AND h.status = 'expired' THEN
              v_outcome := 'expired';
            ELSE
              UPDATE holds SET status = CASE WHEN p_op[i] = 'settle' THEN 'captured' ELSE 'released' END, settled_at = p_op_now[i]
                WHERE request_id = p_request_id[i];
              IF h.status = 'active' THEN
                INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at, seq)
                  VALUES (h.key_id, p_request_id[i], 'release', h.amount, p_op_now[i], h.seq);
                k_held[j] := k_held[j] - h.amount;
                k_dirty[j] := true;
              END IF;
              IF p_op[i] = 'release' THEN
                v_outcome := 'released';
              ELSE
                IF h.status = 'active' THEN
                  v_charged := p_amount[i];
                  v_outcome := 'captured';
                ELSE
                  -- Late (docs/adr/0003): admitted again for what the hold covered, balance and budget, or capped.
                  v_spent := CASE WHEN k_bstart[j] = p_period_start[i] THEN k_bspent[j] ELSE 0 END;
                  v_covered := LEAST(p_amount[i], h.amount);
                  IF k_balance[j] - k_held[j] >= v_covered AND (p_budget[i] IS NULL OR v_spent + k_held[j] + v_covered <= p_budget[i]) THEN
                    v_charged := p_amount[i];
                    v_outcome := 'late';
                  ELSE
                    v_charged := GREATEST(0, LEAST(p_amount[i], k_balance[j] - k_held[j],
                      CASE WHEN p_budget[i] IS NULL THEN p_amount[i] ELSE p_budget[i] - v_spent - k_held[j] END));
                    v_outcome := 'late-capped';
                  END IF;
                END IF;
                INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at)
                  VALUES (h.key_id, p_request_id[i], 'capture', v_charged, p_op_now[i]);
                k_balance[j] := k_balance[j] - v_charged;
                k_spent[j] := k_spent[j] + v_charged;
                k_bspent[j] := CASE WHEN k_bstart[j] = p_period_start[i] THEN k_bspent[j] + v_charged ELSE v_charged END;
                k_bstart[j] := p_period_start[i];
                k_dirty[j] := true;
              END IF;
            END IF;
            v_u := p_usage -> (i - 1);
            IF jsonb_typeof(v_u) = 'object' AND v_outcome IN ('captured', 'late', 'late-capped', 'released', 'expired') THEN
              -- The usage row's cost is what was charged (less than the priced cost only when late-capped).
              INSERT INTO usage_records (request_id, created_at, key_id, model, provider, upstream_model, status, input_tokens,
                  cached_input_tokens, output_tokens, reasoning_tokens, cost, usage_source, attempts)
                SELECT u.request_id, u.created_at, u.key_id, u.model, u.provider, u.upstream_model, u.status, u.input_tokens,
                  u.cached_input_tokens, u.output_tokens, u.reasoning_tokens, LEAST(v_charged, u.cost), u.usage_source, u.attempts
                FROM jsonb_to_record(v_u) AS u (request_id TEXT, created_at BIGINT, key_id TEXT, model TEXT, provider TEXT,
                  upstream_model TEXT, status INTEGER, input_tokens INTEGER, cached_input_tokens INTEGER, output_tokens INTEGER,
                  reasoning_tokens INTEGER, cost BIGINT, usage_source TEXT, attempts TEXT)
                ON CONFLICT (request_id) DO NOTHING;
            END IF;
            v_r := jsonb_build_object('o', v_outcome, 'c', v_charged);
          ELSE
            RAISE EXCEPTION 'tollgate_ledger_batch: unknown operation %', p_op[i];
          END IF;
          v_results := v_results || v_r;
        END LOOP;
        FOR j IN 1 .. COALESCE(array_length(k_id, 1), 0) LOOP
          IF k_dirty[j] THEN
            UPDATE api_keys SET balance = k_balance[j], held = k_held[j], spent = k_spent[j], budget_spent = k_bspent[j],
              budget_period_start = k_bstart[j] WHERE id = k_id[j];
          END IF;
        END LOOP;
        v_r := to_jsonb(v_results);
        UPDATE ledger_batches SET results = v_r WHERE id = p_batch_id;
        RETURN v_r;
      END $$;
    `,
  },
  {
    version: 6,
    name: 'admin-api-metadata-notes-cursors',
    // See the SQLite migration 6. Cursor pagination walks usage rows and ledger entries by their
    // insertion sequence (seq, id), newest first, overall and per key.
    sql: `
      ALTER TABLE api_keys ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
      ALTER TABLE ledger_entries ADD COLUMN note TEXT;
      CREATE INDEX usage_records_by_seq ON usage_records (seq);
      CREATE INDEX usage_records_by_key_seq ON usage_records (key_id, seq);
      CREATE INDEX ledger_entries_by_key_id ON ledger_entries (key_id, id);
    `,
  },
];

/**
 * Migration 5's tollgate_ledger_batch, writing usage rows with their cache_write_tokens: derived from the
 * shipped text (never edited) by three exact replacements, each checked, so the two cannot drift apart.
 */
function ledgerBatchWithCacheWrites(): string {
  const shipped = SHIPPED.find((m) => m.version === 5)!.sql;
  const start = shipped.indexOf('CREATE FUNCTION tollgate_ledger_batch(');
  const end = shipped.indexOf('END $$;', start) + 'END $$;'.length;
  let text = shipped.slice(start, end).replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION');
  const edits: Array<[string, string]> = [
    ['reasoning_tokens, cost, usage_source, attempts)', 'reasoning_tokens, cost, usage_source, attempts, cache_write_tokens)'],
    ['LEAST(v_charged, u.cost), u.usage_source, u.attempts', 'LEAST(v_charged, u.cost), u.usage_source, u.attempts, COALESCE(u.cache_write_tokens, 0)'],
    ['usage_source TEXT, attempts TEXT)', 'usage_source TEXT, attempts TEXT, cache_write_tokens INTEGER)'],
  ];
  for (const [from, to] of edits) {
    if (start < 0 || !text.includes(from)) throw new Error(`postgres migration 7: "${from}" not found in tollgate_ledger_batch`);
    text = text.replace(from, to);
  }
  return text;
}

/**
 * Migration 10's guards: each of migration 8's closing writes (from its first line to its end), and the
 * condition under which it has anything to write. Every one is a plain expression on the function's own
 * arrays, which PL/pgSQL evaluates without starting an executor (`true = ANY (NULL)` is NULL: skipped).
 */
const GUARDED_WRITES: ReadonlyArray<readonly [start: string, end: string, condition: string]> = [
  ['        INSERT INTO holds (request_id', 'WHERE t.is_new;', 'true = ANY (h_new)'],
  // Every new hold is dirty too: more dirty holds than new ones means an existing hold changed.
  ['        UPDATE holds SET', 'AND t.dirty AND NOT t.is_new;', 'cardinality(array_positions(h_dirty, true)) > cardinality(array_positions(h_new, true))'],
  ['        INSERT INTO ledger_entries', 'ORDER BY t.n;', 'cardinality(e_key) > 0'],
  ['        INSERT INTO usage_records', 'ON CONFLICT (request_id) DO NOTHING;', 'cardinality(u_pos) > 0'],
  ['        UPDATE api_keys SET', 'WHERE api_keys.id = t.id AND t.dirty;', 'true = ANY (k_dirty)'],
];

/**
 * Migration 8's tollgate_ledger_batch with each closing write skipped when it has no row to write: derived
 * from the migration's text (each edit checked, so the two cannot drift apart), as migration 7's is from 5's.
 */
function ledgerBatchSkippingEmptyWrites(setBased: string): string {
  const start = setBased.indexOf('CREATE OR REPLACE FUNCTION tollgate_ledger_batch(');
  let text = setBased.slice(start, setBased.indexOf('END $$;', start) + 'END $$;'.length);
  for (const [first, last, condition] of GUARDED_WRITES) {
    const from = text.indexOf(first);
    const to = text.indexOf(last, from) + last.length;
    if (start < 0 || from < 0 || text.indexOf(first, from + 1) >= 0 || to < last.length) {
      throw new Error(`postgres migration 10: "${first.trim()}" not found once in tollgate_ledger_batch`);
    }
    text = `${text.slice(0, from)}        IF ${condition} THEN\n${text.slice(from, to)}\n        END IF;${text.slice(to)}`;
  }
  return text;
}

/** Migrations 1 to 9; migration 10 is derived from 8's text. */
const UP_TO_9: readonly Migration[] = [
  ...SHIPPED,
  {
    version: 7,
    name: 'cache-writes-and-clamp',
    // See the SQLite migration 7; and the group commit's function records the cache-write count too.
    sql: `
      ALTER TABLE usage_records ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE api_keys ADD COLUMN clamp_max_tokens INTEGER NOT NULL DEFAULT 0;
      ${ledgerBatchWithCacheWrites()}
    `,
  },
  {
    version: 8,
    name: 'set-based-ledger-batch',
    // tollgate_ledger_batch with the same decisions and the same answers as migration 5's (read it there),
    // but its writes made set-wise: the batch's hold rows are locked and read in one statement (after the
    // keys, as before), every decision is made on their figures in variables, and the batch then writes
    // its new holds, its changed holds, its ledger entries, its usage rows and its changed keys with ONE
    // statement each. Migration 5's function ran up to five statements per operation; at c=50 that was
    // most of PostgreSQL's CPU per request (issue 12; docs/adr/0012-postgresql.md has the figures).
    // ledger_entries_by_key (key_id) goes: ledger_entries_by_key_id (key_id, id) serves every query it
    // served, and each entry (three per request) no longer pays for the second index.
    sql: `
      DROP INDEX ledger_entries_by_key;
      CREATE OR REPLACE FUNCTION tollgate_ledger_batch(p_batch_id TEXT, p_now BIGINT, p_op TEXT[], p_request_id TEXT[],
        p_key_id TEXT[], p_amount BIGINT[], p_expires_at BIGINT[], p_op_now BIGINT[], p_period_start BIGINT[],
        p_budget BIGINT[], p_usage JSONB)
      -- Every row this function reads or writes is found by its primary key. A plan cached while a table was
      -- small (or never analyzed: autovacuum off) would otherwise scan the whole holds table on every batch
      -- once it is big — measured: 18 ms of a 34 ms batch at 15,000 holds.
      RETURNS JSONB LANGUAGE plpgsql SET enable_seqscan = off AS $$
      DECLARE
        v_results JSONB[] := '{}';
        v_r JSONB;
        v_u JSONB;
        v_amount BIGINT;
        v_charged BIGINT;
        v_spent BIGINT;
        v_covered BIGINT;
        v_outcome TEXT;
        v_was TEXT;
        v_admit BOOLEAN;
        j INT;
        x INT;
        -- The locked keys, by position (as in migration 5).
        k_id TEXT[];
        k_balance BIGINT[];
        k_held BIGINT[];
        k_spent BIGINT[];
        k_status TEXT[];
        k_expires BIGINT[];
        k_bspent BIGINT[];
        k_bstart BIGINT[];
        k_dirty BOOLEAN[];
        -- The batch's hold rows, by position: those that exist (locked), then those this batch creates.
        h_req TEXT[];
        h_key TEXT[];
        h_amount BIGINT[];
        h_status TEXT[];
        h_expires BIGINT[];
        h_created BIGINT[];
        h_settled BIGINT[];
        h_seq INT[];
        h_new BOOLEAN[];
        h_dirty BOOLEAN[];
        -- The ledger entries to append, in order; and the usage rows to write (operation position, charged).
        e_key TEXT[] := '{}';
        e_req TEXT[] := '{}';
        e_kind TEXT[] := '{}';
        e_amount BIGINT[] := '{}';
        e_at BIGINT[] := '{}';
        e_seq INT[] := '{}';
        u_pos INT[] := '{}';
        u_charged BIGINT[] := '{}';
      BEGIN
        INSERT INTO ledger_batches (id, created_at) VALUES (p_batch_id, p_now) ON CONFLICT (id) DO NOTHING;
        IF NOT FOUND THEN
          RETURN (SELECT results FROM ledger_batches WHERE id = p_batch_id);
        END IF;
        SELECT array_agg(id ORDER BY id), array_agg(balance ORDER BY id), array_agg(held ORDER BY id), array_agg(spent ORDER BY id),
            array_agg(status ORDER BY id), array_agg(expires_at ORDER BY id), array_agg(budget_spent ORDER BY id),
            array_agg(budget_period_start ORDER BY id), array_agg(false)
          INTO k_id, k_balance, k_held, k_spent, k_status, k_expires, k_bspent, k_bstart, k_dirty
          FROM (SELECT id, balance, held, spent, status, expires_at, budget_spent, budget_period_start FROM api_keys
            WHERE id = ANY (p_key_id || ARRAY(SELECT key_id FROM holds WHERE request_id = ANY (p_request_id)))
            ORDER BY id FOR UPDATE) locked;
        SELECT array_agg(request_id ORDER BY request_id), array_agg(key_id ORDER BY request_id), array_agg(amount ORDER BY request_id),
            array_agg(status ORDER BY request_id), array_agg(expires_at ORDER BY request_id), array_agg(created_at ORDER BY request_id),
            array_agg(settled_at ORDER BY request_id), array_agg(seq ORDER BY request_id), array_agg(false), array_agg(false)
          INTO h_req, h_key, h_amount, h_status, h_expires, h_created, h_settled, h_seq, h_new, h_dirty
          FROM (SELECT request_id, key_id, amount, status, expires_at, created_at, settled_at, seq FROM holds
            WHERE request_id = ANY (p_request_id) ORDER BY request_id FOR UPDATE) locked;
        FOR i IN 1 .. COALESCE(array_length(p_op, 1), 0) LOOP
          v_r := NULL;
          v_admit := NULL;
          x := array_position(h_req, p_request_id[i]);
          IF p_op[i] = 'hold' THEN
            j := array_position(k_id, p_key_id[i]);
            v_amount := p_amount[i];
            IF x IS NOT NULL THEN
              v_r := '{"o":"conflict"}';
            END IF;
          ELSIF x IS NULL THEN
            v_r := '{"o":"missing"}';
          ELSE
            j := array_position(k_id, h_key[x]);
          END IF;

          IF v_r IS NOT NULL THEN
            NULL;
          ELSIF p_op[i] = 'hold' OR p_op[i] = 'grow' OR p_op[i] = 'renew' THEN
            IF p_op[i] = 'grow' THEN
              v_amount := p_amount[i];
              IF h_status[x] <> 'active' THEN
                v_r := jsonb_build_object('o', CASE WHEN h_status[x] = 'expired' THEN 'expired' ELSE 'closed' END);
              END IF;
            ELSIF p_op[i] = 'renew' THEN
              v_amount := h_amount[x];
              IF h_status[x] = 'active' THEN
                h_expires[x] := p_expires_at[i];
                h_dirty[x] := true;
                v_r := '{"o":"extended"}';
              ELSIF h_status[x] <> 'expired' THEN
                v_r := '{"o":"closed"}';
              END IF;
            END IF;
            IF v_r IS NULL THEN
              v_admit := j IS NOT NULL AND k_status[j] = 'active' AND (k_expires[j] IS NULL OR k_expires[j] > p_op_now[i]);
              IF v_admit THEN
                v_spent := CASE WHEN k_bstart[j] = p_period_start[i] THEN k_bspent[j] ELSE 0 END;
                v_admit := k_balance[j] - k_held[j] >= v_amount
                  AND (p_budget[i] IS NULL OR v_spent + k_held[j] + v_amount <= p_budget[i]);
              END IF;
              IF v_admit THEN
                k_held[j] := k_held[j] + v_amount;
                k_bspent[j] := v_spent;
                k_bstart[j] := p_period_start[i];
                k_dirty[j] := true;
                IF p_op[i] = 'hold' THEN
                  h_req := h_req || p_request_id[i];
                  x := array_length(h_req, 1);
                  h_key[x] := p_key_id[i];
                  h_amount[x] := v_amount;
                  h_status[x] := 'active';
                  h_expires[x] := p_expires_at[i];
                  h_created[x] := p_op_now[i];
                  h_settled[x] := NULL;
                  h_seq[x] := 0;
                  h_new[x] := true;
                  h_dirty[x] := true;
                  v_r := '{"o":"admitted"}';
                ELSIF p_op[i] = 'grow' THEN
                  h_amount[x] := h_amount[x] + v_amount;
                  h_seq[x] := h_seq[x] + 1;
                  h_dirty[x] := true;
                  v_r := '{"o":"grown"}';
                ELSE
                  h_status[x] := 'active';
                  h_seq[x] := h_seq[x] + 1;
                  h_expires[x] := p_expires_at[i];
                  h_settled[x] := NULL;
                  h_dirty[x] := true;
                  v_r := '{"o":"readmitted"}';
                END IF;
                e_key := e_key || h_key[x];
                e_req := e_req || p_request_id[i];
                e_kind := e_kind || 'hold'::text;
                e_amount := e_amount || v_amount;
                e_at := e_at || p_op_now[i];
                e_seq := e_seq || h_seq[x];
              ELSE
                v_r := jsonb_build_object('o', 'refused', 'a', v_amount,
                  'k', CASE WHEN j IS NULL THEN NULL ELSE jsonb_build_object('balance', k_balance[j], 'held', k_held[j],
                    'status', k_status[j], 'expires_at', k_expires[j], 'budget_spent', k_bspent[j], 'budget_period_start', k_bstart[j]) END);
              END IF;
            END IF;
          ELSIF p_op[i] = 'settle' OR p_op[i] = 'release' THEN
            v_charged := 0;
            v_was := h_status[x];
            IF v_was NOT IN ('active', 'expired') THEN
              v_outcome := 'duplicate';
            ELSIF p_op[i] = 'release' AND v_was = 'expired' THEN
              v_outcome := 'expired';
            ELSE
              h_status[x] := CASE WHEN p_op[i] = 'settle' THEN 'captured' ELSE 'released' END;
              h_settled[x] := p_op_now[i];
              h_dirty[x] := true;
              IF v_was = 'active' THEN
                e_key := e_key || h_key[x];
                e_req := e_req || p_request_id[i];
                e_kind := e_kind || 'release'::text;
                e_amount := e_amount || h_amount[x];
                e_at := e_at || p_op_now[i];
                e_seq := e_seq || h_seq[x];
                k_held[j] := k_held[j] - h_amount[x];
                k_dirty[j] := true;
              END IF;
              IF p_op[i] = 'release' THEN
                v_outcome := 'released';
              ELSE
                IF v_was = 'active' THEN
                  v_charged := p_amount[i];
                  v_outcome := 'captured';
                ELSE
                  v_spent := CASE WHEN k_bstart[j] = p_period_start[i] THEN k_bspent[j] ELSE 0 END;
                  v_covered := LEAST(p_amount[i], h_amount[x]);
                  IF k_balance[j] - k_held[j] >= v_covered AND (p_budget[i] IS NULL OR v_spent + k_held[j] + v_covered <= p_budget[i]) THEN
                    v_charged := p_amount[i];
                    v_outcome := 'late';
                  ELSE
                    v_charged := GREATEST(0, LEAST(p_amount[i], k_balance[j] - k_held[j],
                      CASE WHEN p_budget[i] IS NULL THEN p_amount[i] ELSE p_budget[i] - v_spent - k_held[j] END));
                    v_outcome := 'late-capped';
                  END IF;
                END IF;
                e_key := e_key || h_key[x];
                e_req := e_req || p_request_id[i];
                e_kind := e_kind || 'capture'::text;
                e_amount := e_amount || v_charged;
                e_at := e_at || p_op_now[i];
                e_seq := e_seq || 0;
                k_balance[j] := k_balance[j] - v_charged;
                k_spent[j] := k_spent[j] + v_charged;
                k_bspent[j] := CASE WHEN k_bstart[j] = p_period_start[i] THEN k_bspent[j] + v_charged ELSE v_charged END;
                k_bstart[j] := p_period_start[i];
                k_dirty[j] := true;
              END IF;
            END IF;
            v_u := p_usage -> (i - 1);
            IF jsonb_typeof(v_u) = 'object' AND v_outcome IN ('captured', 'late', 'late-capped', 'released', 'expired') THEN
              u_pos := u_pos || i;
              u_charged := u_charged || v_charged;
            END IF;
            v_r := jsonb_build_object('o', v_outcome, 'c', v_charged);
          ELSE
            RAISE EXCEPTION 'tollgate_ledger_batch: unknown operation %', p_op[i];
          END IF;
          v_results := v_results || v_r;
        END LOOP;

        INSERT INTO holds (request_id, key_id, amount, status, expires_at, created_at, settled_at, seq)
          SELECT t.request_id, t.key_id, t.amount, t.status, t.expires_at, t.created_at, t.settled_at, t.seq
          FROM unnest(h_req, h_key, h_amount, h_status, h_expires, h_created, h_settled, h_seq, h_new)
            AS t(request_id, key_id, amount, status, expires_at, created_at, settled_at, seq, is_new)
          WHERE t.is_new;
        UPDATE holds SET amount = t.amount, status = t.status, expires_at = t.expires_at, settled_at = t.settled_at, seq = t.seq
          FROM unnest(h_req, h_amount, h_status, h_expires, h_settled, h_seq, h_new, h_dirty)
            AS t(request_id, amount, status, expires_at, settled_at, seq, is_new, dirty)
          WHERE holds.request_id = t.request_id AND t.dirty AND NOT t.is_new;
        INSERT INTO ledger_entries (key_id, request_id, kind, amount, created_at, seq)
          SELECT t.key_id, t.request_id, t.kind, t.amount, t.created_at, t.seq
          FROM unnest(e_key, e_req, e_kind, e_amount, e_at, e_seq) WITH ORDINALITY
            AS t(key_id, request_id, kind, amount, created_at, seq, n)
          ORDER BY t.n;
        -- The usage row's cost is what was charged (less than the priced cost only when late-capped).
        INSERT INTO usage_records (request_id, created_at, key_id, model, provider, upstream_model, status, input_tokens,
            cached_input_tokens, output_tokens, reasoning_tokens, cost, usage_source, attempts, cache_write_tokens)
          SELECT u.request_id, u.created_at, u.key_id, u.model, u.provider, u.upstream_model, u.status, u.input_tokens,
            u.cached_input_tokens, u.output_tokens, u.reasoning_tokens, LEAST(p.charged, u.cost), u.usage_source, u.attempts,
            COALESCE(u.cache_write_tokens, 0)
          FROM unnest(u_pos, u_charged) WITH ORDINALITY AS p(pos, charged, n)
          CROSS JOIN LATERAL jsonb_to_record(p_usage -> (p.pos - 1)) AS u (request_id TEXT, created_at BIGINT, key_id TEXT,
            model TEXT, provider TEXT, upstream_model TEXT, status INTEGER, input_tokens INTEGER, cached_input_tokens INTEGER,
            output_tokens INTEGER, reasoning_tokens INTEGER, cost BIGINT, usage_source TEXT, attempts TEXT, cache_write_tokens INTEGER)
          ORDER BY p.n
          ON CONFLICT (request_id) DO NOTHING;
        UPDATE api_keys SET balance = t.balance, held = t.held, spent = t.spent, budget_spent = t.bspent, budget_period_start = t.bstart
          FROM unnest(k_id, k_balance, k_held, k_spent, k_bspent, k_bstart, k_dirty) AS t(id, balance, held, spent, bspent, bstart, dirty)
          WHERE api_keys.id = t.id AND t.dirty;
        v_r := to_jsonb(v_results);
        UPDATE ledger_batches SET results = v_r WHERE id = p_batch_id;
        RETURN v_r;
      END $$;
    `,
  },
  {
    version: 9,
    name: 'ledger-batch-procedure-and-generic-plans',
    // The batch's key row locks are released BEFORE its commit is flushed to disk, and its answers are
    // given only AFTER. tollgate_ledger_batch (unchanged) runs in a transaction that commits without
    // waiting for the WAL flush, so the hot key's row lock is free for the next gateway's batch at once;
    // the procedure then commits a second, tiny transaction synchronously. Its flush covers every WAL
    // record before its own — the batch's commit included — and CALL answers only once that flush is
    // done. No client therefore hears of a hold or charge the database could still lose; a later batch
    // that saw this one's figures commits after it, so its own flush makes this one durable first.
    // Measured on 3 gateways sharing one hot key: the lock holder spent about half its time waiting for
    // that flush while the others queued behind it (docs/adr/0012-postgresql.md).
    //
    // And the batch function plans its statements once (generic plans): with the default plan cache mode
    // PostgreSQL kept planning each of them afresh on every call (custom plans for the array parameters),
    // though with sequential scans off every plan is the same primary-key lookup. Measured at the store
    // level, 8 requests at a time: PostgreSQL CPU 0.18 -> 0.16 ms per request, 4,500 -> 5,000 requests/s.
    sql: `
      ALTER FUNCTION tollgate_ledger_batch SET plan_cache_mode = force_generic_plan;
      CREATE PROCEDURE tollgate_commit_ledger_batch(p_batch_id TEXT, p_now BIGINT, p_op TEXT[], p_request_id TEXT[],
        p_key_id TEXT[], p_amount BIGINT[], p_expires_at BIGINT[], p_op_now BIGINT[], p_period_start BIGINT[],
        p_budget BIGINT[], p_usage JSONB, INOUT results JSONB DEFAULT NULL)
      LANGUAGE plpgsql AS $$
      BEGIN
        results := tollgate_ledger_batch(p_batch_id, p_now, p_op, p_request_id, p_key_id, p_amount, p_expires_at,
          p_op_now, p_period_start, p_budget, p_usage);
        -- This transaction only: the operator's own setting applies to the one below.
        PERFORM set_config('synchronous_commit', 'off', true);
        COMMIT;
        -- A commit flushes only a transaction that wrote WAL of its own (an id alone is not enough): this
        -- message is the smallest such write, needs no table and no privilege, and takes no lock. Logical
        -- decoding (if any) sees it under the prefix 'tollgate'; subscribers ignore messages by default.
        PERFORM pg_logical_emit_message(true, 'tollgate', '');
      END $$;
    `,
  },
];

const MIGRATION_10: Migration = {
  version: 10,
  name: 'ledger-batch-skips-empty-writes',
  // tollgate_ledger_batch (migration 8's decisions and writes, unchanged) skips each closing write that has
  // no row to write: a batch of holds alone updates no hold and writes no usage row, a batch of
  // settlements alone inserts no hold. A statement costs PostgreSQL its executor start-up, its
  // constraints' and indexes' setup and its trigger queue even when it touches no row, and the batches
  // of a gateway at low load carry one or two operations of one kind. Measured in
  // docs/adr/0012-postgresql.md. CREATE OR REPLACE resets the function's settings to those in its text,
  // so migration 9's plan setting is made again.
  sql: `
      ${ledgerBatchSkippingEmptyWrites(UP_TO_9.find((m) => m.version === 8)!.sql)}
      ALTER FUNCTION tollgate_ledger_batch SET plan_cache_mode = force_generic_plan;
    `,
};

/** The usage-row columns migration 11 adds, with their types: written by the batch function as the others are. */
const OUTCOME_COLUMNS = 'endpoint TEXT, error_code TEXT, error_message TEXT, duration_ms INTEGER, first_token_ms INTEGER';

/**
 * Migration 10's tollgate_ledger_batch writing the usage row's new columns too: derived from its text by
 * three exact replacements, each checked (as migration 7's is from 5's).
 */
function ledgerBatchWithOutcomeColumns(): string {
  const shipped = MIGRATION_10.sql;
  const start = shipped.indexOf('CREATE OR REPLACE FUNCTION tollgate_ledger_batch(');
  let text = shipped.slice(start, shipped.indexOf('END $$;', start) + 'END $$;'.length);
  const names = OUTCOME_COLUMNS.split(', ').map((column) => column.split(' ')[0]!);
  const edits: Array<[string, string]> = [
    ['usage_source, attempts, cache_write_tokens)', `usage_source, attempts, cache_write_tokens, ${names.join(', ')})`],
    ['COALESCE(u.cache_write_tokens, 0)', `COALESCE(u.cache_write_tokens, 0), ${names.map((n) => `u.${n}`).join(', ')}`],
    ['attempts TEXT, cache_write_tokens INTEGER)', `attempts TEXT, cache_write_tokens INTEGER, ${OUTCOME_COLUMNS})`],
  ];
  for (const [from, to] of edits) {
    if (start < 0 || text.indexOf(from) < 0 || text.indexOf(from) !== text.lastIndexOf(from)) {
      throw new Error(`postgres migration 11: "${from}" not found once in tollgate_ledger_batch`);
    }
    text = text.replace(from, to);
  }
  return text;
}

export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  ...UP_TO_9,
  MIGRATION_10,
  {
    version: 11,
    name: 'a-usage-row-for-every-request',
    // See the SQLite migration 8: rows of requests that moved no money (model, provider and upstream model
    // may be NULL, usage source 'none'), each row's client API, error, latency and time to first token, and
    // the per-minute count of requests without a valid key. The batch function writes the new columns.
    sql: `
      ALTER TABLE usage_records ALTER COLUMN model DROP NOT NULL,
        ALTER COLUMN provider DROP NOT NULL,
        ALTER COLUMN upstream_model DROP NOT NULL,
        DROP CONSTRAINT usage_records_usage_source_check,
        ADD CONSTRAINT usage_records_usage_source_check CHECK (usage_source IN ('upstream', 'estimated', 'none')),
        ${OUTCOME_COLUMNS.split(', ')
          .map((column) => `ADD COLUMN ${column}`)
          .join(', ')};
      CREATE TABLE unauthenticated_requests (
        minute BIGINT PRIMARY KEY,
        requests BIGINT NOT NULL
      );
      ${ledgerBatchWithOutcomeColumns()}
      ALTER FUNCTION tollgate_ledger_batch SET plan_cache_mode = force_generic_plan;
    `,
  },
];
