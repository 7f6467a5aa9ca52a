-- PostgreSQL migration 3: key-limits-budgets-expiry. Shipped: never edit it; add the next number.
--
-- See the SQLite migration 3. Settlement and renewal now keep the budget's period spend, and renewal
-- (a re-admission) and late captures check the budget as admission does.

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
    