-- PostgreSQL migration 4: idempotency-keys-and-growing-holds. Shipped: never edit it; add the next number.
--
-- See the SQLite migration 4; and growing a live hold by a step through the same admission as a new
-- hold (product.md §13), locking the hold row first, then the key row, as every ledger write does.

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
    