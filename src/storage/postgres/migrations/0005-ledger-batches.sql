-- PostgreSQL migration 5: ledger-batches. Shipped: never edit it; add the next number.
--
-- Group commit (docs/adr/0009-group-commit.md, 0012-postgresql.md): the ledger writes one gateway has
-- pending go to the database as ONE call of tollgate_ledger_batch, one transaction, applied in order.
-- ledger_batches records each committed batch's answers under the batch's id: a batch retried after its
-- connection dropped finds them and replays them instead of applying anything twice.

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
    