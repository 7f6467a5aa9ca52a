-- PostgreSQL migration 2: entry-seq-for-renewed-holds. Shipped: never edit it; add the next number.
--
-- See the SQLite migration 2. Settlement of an expired hold ("late") now goes through admission, and
-- renewing a hold re-admits it when the sweeper expired it while its request still ran
-- (docs/adr/0003-ledger-and-holds.md).

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
    