-- PostgreSQL migration 15: accounts. Shipped: never edit it; add the next number.
--
-- See the SQLite migration 11 (docs/adr/0047-accounts.md): accounts own the money; keys carry caps. Each
-- existing key gets a personal account ('acct_' + its id's hex) holding its balance, held and spent;
-- every ledger entry names the account it moved (key_id stays, NULL only for an account's own top-up or
-- adjustment); a key keeps held and spent, its own figures, for its credit limit and budget, and its
-- balance column goes. `personal` is an INTEGER 0/1, as on SQLite, so the shared listing SQL reads the
-- same on both.
--
-- tollgate_ledger_batch gains the account half of every rule (the one specification is
-- test/storage/ledger-rules.test.ts; the SQLite text is sqlite/ledger-rules.ts). Its signature changes
-- (each operation's account budget window: p_acct_period_start, p_acct_budget), so it and its procedure
-- are dropped and created again, with migration 9's plan setting and durability procedure. The batch
-- locks its accounts' rows first, then its keys' rows, each in id order (a key's account is immutable,
-- so it is found without a lock): the one lock order every writer uses, so batches of many keys of one
-- hot account queue instead of deadlocking. Admission is all-or-nothing over the key's caps (active,
-- unexpired, credit limit, budget) and the account's (active, available balance, budget); a capture
-- charges the account's balance and both spends and budgets; a release or an expiry unholds both; a
-- late capture is re-admitted against all four caps, else capped at the least room among them.

      CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        balance BIGINT NOT NULL DEFAULT 0,    -- cached: Σtopup + Σadjust − Σcapture of its entries
        held BIGINT NOT NULL DEFAULT 0,       -- cached: Σhold − Σrelease
        spent BIGINT NOT NULL DEFAULT 0,      -- cached: Σcapture
        status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
        budget BIGINT,                        -- nano-dollars per period; NULL: none
        budget_period TEXT CHECK (budget_period IN ('day', 'week', 'month')),
        budget_spent BIGINT NOT NULL DEFAULT 0,
        budget_period_start BIGINT NOT NULL DEFAULT 0,
        metadata TEXT NOT NULL DEFAULT '{}',
        allowed_models TEXT NOT NULL DEFAULT '*',  -- what the account token may give its own keys: JSON array, or '*'
        personal INTEGER NOT NULL DEFAULT 0,  -- made for one key by `keys create` without --account
        token_prefix TEXT,                    -- the self-service account token (tga-...): its first characters
        token_hash TEXT UNIQUE,               -- and its SHA-256; NULL: none issued
        created_at TEXT NOT NULL
      );
      CREATE INDEX accounts_by_created ON accounts (created_at, id);

      INSERT INTO accounts (id, name, balance, held, spent, personal, created_at)
        SELECT CASE WHEN id LIKE 'key\_%' ESCAPE '\' THEN 'acct_' || substr(id, 5) ELSE 'acct_' || id END,
          name, balance, held, spent, 1, created_at
        FROM api_keys ORDER BY created_at, id;

      ALTER TABLE api_keys ADD COLUMN account_id TEXT;
      ALTER TABLE api_keys ADD COLUMN credit_limit BIGINT;   -- nano-dollars the key may ever spend; NULL: none
      UPDATE api_keys SET account_id = CASE WHEN id LIKE 'key\_%' ESCAPE '\' THEN 'acct_' || substr(id, 5) ELSE 'acct_' || id END;
      ALTER TABLE api_keys ALTER COLUMN account_id SET NOT NULL;
      ALTER TABLE api_keys ADD CONSTRAINT api_keys_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts (id);
      ALTER TABLE api_keys DROP COLUMN balance;
      CREATE INDEX api_keys_by_account ON api_keys (account_id);

      ALTER TABLE ledger_entries ADD COLUMN account_id TEXT;
      UPDATE ledger_entries e SET account_id = k.account_id FROM api_keys k WHERE k.id = e.key_id;
      ALTER TABLE ledger_entries ALTER COLUMN account_id SET NOT NULL;
      ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts (id);
      ALTER TABLE ledger_entries ALTER COLUMN key_id DROP NOT NULL;
      CREATE INDEX ledger_entries_by_account_id ON ledger_entries (account_id, id);

      DROP PROCEDURE tollgate_commit_ledger_batch(TEXT, BIGINT, TEXT[], TEXT[], TEXT[], BIGINT[], BIGINT[], BIGINT[], BIGINT[], BIGINT[], JSONB, JSONB);
      DROP FUNCTION tollgate_ledger_batch(TEXT, BIGINT, TEXT[], TEXT[], TEXT[], BIGINT[], BIGINT[], BIGINT[], BIGINT[], BIGINT[], JSONB);

      CREATE FUNCTION tollgate_ledger_batch(p_batch_id TEXT, p_now BIGINT, p_op TEXT[], p_request_id TEXT[],
        p_key_id TEXT[], p_amount BIGINT[], p_expires_at BIGINT[], p_op_now BIGINT[], p_period_start BIGINT[],
        p_budget BIGINT[], p_acct_period_start BIGINT[], p_acct_budget BIGINT[], p_usage JSONB)
      -- Every row this function reads or writes is found by its primary key (migration 13's note).
      RETURNS JSONB LANGUAGE plpgsql SET enable_seqscan = off AS $$
      DECLARE
        v_results JSONB[] := '{}';
        v_r JSONB;
        v_u JSONB;
        v_keys TEXT[];
        v_amount BIGINT;
        v_charged BIGINT;
        v_spent BIGINT;
        v_aspent BIGINT;
        v_covered BIGINT;
        v_room BIGINT;
        v_outcome TEXT;
        v_was TEXT;
        v_admit BOOLEAN;
        j INT;
        ja INT;
        x INT;
        -- The locked accounts, by position.
        a_id TEXT[];
        a_balance BIGINT[];
        a_held BIGINT[];
        a_spent BIGINT[];
        a_status TEXT[];
        a_bspent BIGINT[];
        a_bstart BIGINT[];
        a_dirty BOOLEAN[];
        -- The locked keys, by position (k_acct: the position of the key's account in a_id).
        k_id TEXT[];
        k_held BIGINT[];
        k_spent BIGINT[];
        k_status TEXT[];
        k_expires BIGINT[];
        k_bspent BIGINT[];
        k_bstart BIGINT[];
        k_credit BIGINT[];
        k_account TEXT[];
        k_acct INT[];
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
        e_acct TEXT[] := '{}';
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
        v_keys := p_key_id || ARRAY(SELECT key_id FROM holds WHERE request_id = ANY (p_request_id));
        -- Accounts first, then keys, each in id order: the lock order of every writer.
        SELECT array_agg(id ORDER BY id), array_agg(balance ORDER BY id), array_agg(held ORDER BY id), array_agg(spent ORDER BY id),
            array_agg(status ORDER BY id), array_agg(budget_spent ORDER BY id), array_agg(budget_period_start ORDER BY id), array_agg(false)
          INTO a_id, a_balance, a_held, a_spent, a_status, a_bspent, a_bstart, a_dirty
          FROM (SELECT id, balance, held, spent, status, budget_spent, budget_period_start FROM accounts
            WHERE id = ANY (ARRAY(SELECT account_id FROM api_keys WHERE id = ANY (v_keys)))
            ORDER BY id FOR UPDATE) locked;
        SELECT array_agg(id ORDER BY id), array_agg(held ORDER BY id), array_agg(spent ORDER BY id),
            array_agg(status ORDER BY id), array_agg(expires_at ORDER BY id), array_agg(budget_spent ORDER BY id),
            array_agg(budget_period_start ORDER BY id), array_agg(credit_limit ORDER BY id), array_agg(account_id ORDER BY id),
            array_agg(array_position(a_id, account_id) ORDER BY id), array_agg(false)
          INTO k_id, k_held, k_spent, k_status, k_expires, k_bspent, k_bstart, k_credit, k_account, k_acct, k_dirty
          FROM (SELECT id, held, spent, status, expires_at, budget_spent, budget_period_start, credit_limit, account_id FROM api_keys
            WHERE id = ANY (v_keys) ORDER BY id FOR UPDATE) locked;
        SELECT array_agg(request_id ORDER BY request_id), array_agg(key_id ORDER BY request_id), array_agg(amount ORDER BY request_id),
            array_agg(status ORDER BY request_id), array_agg(expires_at ORDER BY request_id), array_agg(created_at ORDER BY request_id),
            array_agg(settled_at ORDER BY request_id), array_agg(seq ORDER BY request_id), array_agg(false), array_agg(false)
          INTO h_req, h_key, h_amount, h_status, h_expires, h_created, h_settled, h_seq, h_new, h_dirty
          FROM (SELECT request_id, key_id, amount, status, expires_at, created_at, settled_at, seq FROM holds
            WHERE request_id = ANY (p_request_id) ORDER BY request_id FOR UPDATE) locked;
        FOR i IN 1 .. COALESCE(array_length(p_op, 1), 0) LOOP
          v_r := NULL;
          v_admit := NULL;
          j := NULL;
          ja := NULL;
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
          IF j IS NOT NULL THEN
            ja := k_acct[j];
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
              -- The key's half: active, unexpired, its credit limit and its budget cover the hold; then the
              -- account's half: active, its available balance and its budget cover it. Both or neither.
              v_admit := j IS NOT NULL AND ja IS NOT NULL AND k_status[j] = 'active' AND (k_expires[j] IS NULL OR k_expires[j] > p_op_now[i]);
              IF v_admit THEN
                v_spent := CASE WHEN k_bstart[j] = p_period_start[i] THEN k_bspent[j] ELSE 0 END;
                v_aspent := CASE WHEN a_bstart[ja] = p_acct_period_start[i] THEN a_bspent[ja] ELSE 0 END;
                v_admit := (k_credit[j] IS NULL OR k_spent[j] + k_held[j] + v_amount <= k_credit[j])
                  AND (p_budget[i] IS NULL OR v_spent + k_held[j] + v_amount <= p_budget[i])
                  AND a_status[ja] = 'active' AND a_balance[ja] - a_held[ja] >= v_amount
                  AND (p_acct_budget[i] IS NULL OR v_aspent + a_held[ja] + v_amount <= p_acct_budget[i]);
              END IF;
              IF v_admit THEN
                k_held[j] := k_held[j] + v_amount;
                k_bspent[j] := v_spent;
                k_bstart[j] := p_period_start[i];
                k_dirty[j] := true;
                a_held[ja] := a_held[ja] + v_amount;
                a_bspent[ja] := v_aspent;
                a_bstart[ja] := p_acct_period_start[i];
                a_dirty[ja] := true;
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
                e_acct := e_acct || a_id[ja];
                e_key := e_key || h_key[x];
                e_req := e_req || p_request_id[i];
                e_kind := e_kind || 'hold'::text;
                e_amount := e_amount || v_amount;
                e_at := e_at || p_op_now[i];
                e_seq := e_seq || h_seq[x];
              ELSE
                -- The rows as admission saw them: TypeScript says why (rows.ts refusalOf).
                v_r := jsonb_build_object('o', 'refused', 'a', v_amount,
                  'k', CASE WHEN j IS NULL THEN NULL ELSE jsonb_build_object('held', k_held[j], 'spent', k_spent[j],
                    'status', k_status[j], 'expires_at', k_expires[j], 'budget_spent', k_bspent[j], 'budget_period_start', k_bstart[j],
                    'credit_limit', k_credit[j], 'account_id', k_account[j]) END,
                  'ac', CASE WHEN ja IS NULL THEN NULL ELSE jsonb_build_object('balance', a_balance[ja], 'held', a_held[ja],
                    'status', a_status[ja], 'budget_spent', a_bspent[ja], 'budget_period_start', a_bstart[ja]) END);
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
                e_acct := e_acct || a_id[ja];
                e_key := e_key || h_key[x];
                e_req := e_req || p_request_id[i];
                e_kind := e_kind || 'release'::text;
                e_amount := e_amount || h_amount[x];
                e_at := e_at || p_op_now[i];
                e_seq := e_seq || h_seq[x];
                k_held[j] := k_held[j] - h_amount[x];
                k_dirty[j] := true;
                a_held[ja] := a_held[ja] - h_amount[x];
                a_dirty[ja] := true;
              END IF;
              IF p_op[i] = 'release' THEN
                v_outcome := 'released';
              ELSE
                IF v_was = 'active' THEN
                  v_charged := p_amount[i];
                  v_outcome := 'captured';
                ELSE
                  -- Late (a sweeper released the hold): re-admitted against all four caps for what the hold
                  -- covered, else charged only the least room among them (rows.ts roomOf), never below zero.
                  v_spent := CASE WHEN k_bstart[j] = p_period_start[i] THEN k_bspent[j] ELSE 0 END;
                  v_aspent := CASE WHEN a_bstart[ja] = p_acct_period_start[i] THEN a_bspent[ja] ELSE 0 END;
                  v_covered := LEAST(p_amount[i], h_amount[x]);
                  -- LEAST ignores NULLs: an absent cap leaves no limit.
                  v_room := LEAST(a_balance[ja] - a_held[ja],
                    k_credit[j] - k_spent[j] - k_held[j],
                    p_budget[i] - v_spent - k_held[j],
                    p_acct_budget[i] - v_aspent - a_held[ja]);
                  IF v_room >= v_covered THEN
                    v_charged := p_amount[i];
                    v_outcome := 'late';
                  ELSE
                    v_charged := GREATEST(0, LEAST(p_amount[i], v_room));
                    v_outcome := 'late-capped';
                  END IF;
                END IF;
                e_acct := e_acct || a_id[ja];
                e_key := e_key || h_key[x];
                e_req := e_req || p_request_id[i];
                e_kind := e_kind || 'capture'::text;
                e_amount := e_amount || v_charged;
                e_at := e_at || p_op_now[i];
                e_seq := e_seq || 0;
                k_spent[j] := k_spent[j] + v_charged;
                k_bspent[j] := CASE WHEN k_bstart[j] = p_period_start[i] THEN k_bspent[j] + v_charged ELSE v_charged END;
                k_bstart[j] := p_period_start[i];
                k_dirty[j] := true;
                a_balance[ja] := a_balance[ja] - v_charged;
                a_spent[ja] := a_spent[ja] + v_charged;
                a_bspent[ja] := CASE WHEN a_bstart[ja] = p_acct_period_start[i] THEN a_bspent[ja] + v_charged ELSE v_charged END;
                a_bstart[ja] := p_acct_period_start[i];
                a_dirty[ja] := true;
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

        IF true = ANY (h_new) THEN
        INSERT INTO holds (request_id, key_id, amount, status, expires_at, created_at, settled_at, seq)
          SELECT t.request_id, t.key_id, t.amount, t.status, t.expires_at, t.created_at, t.settled_at, t.seq
          FROM unnest(h_req, h_key, h_amount, h_status, h_expires, h_created, h_settled, h_seq, h_new)
            AS t(request_id, key_id, amount, status, expires_at, created_at, settled_at, seq, is_new)
          WHERE t.is_new;
        END IF;
        IF cardinality(array_positions(h_dirty, true)) > cardinality(array_positions(h_new, true)) THEN
        UPDATE holds SET amount = t.amount, status = t.status, expires_at = t.expires_at, settled_at = t.settled_at, seq = t.seq
          FROM unnest(h_req, h_amount, h_status, h_expires, h_settled, h_seq, h_new, h_dirty)
            AS t(request_id, amount, status, expires_at, settled_at, seq, is_new, dirty)
          WHERE holds.request_id = t.request_id AND t.dirty AND NOT t.is_new;
        END IF;
        IF cardinality(e_key) > 0 THEN
        INSERT INTO ledger_entries (account_id, key_id, request_id, kind, amount, created_at, seq)
          SELECT t.account_id, t.key_id, t.request_id, t.kind, t.amount, t.created_at, t.seq
          FROM unnest(e_acct, e_key, e_req, e_kind, e_amount, e_at, e_seq) WITH ORDINALITY
            AS t(account_id, key_id, request_id, kind, amount, created_at, seq, n)
          ORDER BY t.n;
        END IF;
        -- The usage row's cost is what was charged (less than the priced cost only when late-capped).
        IF cardinality(u_pos) > 0 THEN
        INSERT INTO usage_records (request_id, created_at, key_id, model, provider, upstream_model, status, input_tokens,
            cached_input_tokens, output_tokens, reasoning_tokens, cost, usage_source, attempts, cache_write_tokens, endpoint, error_code, error_message, duration_ms, first_token_ms, session_id)
          SELECT u.request_id, u.created_at, u.key_id, u.model, u.provider, u.upstream_model, u.status, u.input_tokens,
            u.cached_input_tokens, u.output_tokens, u.reasoning_tokens, LEAST(p.charged, u.cost), u.usage_source, u.attempts,
            COALESCE(u.cache_write_tokens, 0), u.endpoint, u.error_code, u.error_message, u.duration_ms, u.first_token_ms, u.session_id
          FROM unnest(u_pos, u_charged) WITH ORDINALITY AS p(pos, charged, n)
          CROSS JOIN LATERAL jsonb_to_record(p_usage -> (p.pos - 1)) AS u (request_id TEXT, created_at BIGINT, key_id TEXT,
            model TEXT, provider TEXT, upstream_model TEXT, status INTEGER, input_tokens INTEGER, cached_input_tokens INTEGER,
            output_tokens INTEGER, reasoning_tokens INTEGER, cost BIGINT, usage_source TEXT, attempts TEXT, cache_write_tokens INTEGER, endpoint TEXT, error_code TEXT, error_message TEXT, duration_ms INTEGER, first_token_ms INTEGER, session_id TEXT)
          ORDER BY p.n
          ON CONFLICT (request_id) DO NOTHING;
        END IF;
        IF true = ANY (k_dirty) THEN
        UPDATE api_keys SET held = t.held, spent = t.spent, budget_spent = t.bspent, budget_period_start = t.bstart
          FROM unnest(k_id, k_held, k_spent, k_bspent, k_bstart, k_dirty) AS t(id, held, spent, bspent, bstart, dirty)
          WHERE api_keys.id = t.id AND t.dirty;
        END IF;
        IF true = ANY (a_dirty) THEN
        UPDATE accounts SET balance = t.balance, held = t.held, spent = t.spent, budget_spent = t.bspent, budget_period_start = t.bstart
          FROM unnest(a_id, a_balance, a_held, a_spent, a_bspent, a_bstart, a_dirty) AS t(id, balance, held, spent, bspent, bstart, dirty)
          WHERE accounts.id = t.id AND t.dirty;
        END IF;
        v_r := to_jsonb(v_results);
        UPDATE ledger_batches SET results = v_r WHERE id = p_batch_id;
        RETURN v_r;
      END $$;
      ALTER FUNCTION tollgate_ledger_batch SET plan_cache_mode = force_generic_plan;

      -- Migration 9's procedure, with the new arguments: the batch commits without waiting for its flush
      -- (its row locks free at once), then a tiny synchronous commit flushes it before CALL answers.
      CREATE PROCEDURE tollgate_commit_ledger_batch(p_batch_id TEXT, p_now BIGINT, p_op TEXT[], p_request_id TEXT[],
        p_key_id TEXT[], p_amount BIGINT[], p_expires_at BIGINT[], p_op_now BIGINT[], p_period_start BIGINT[],
        p_budget BIGINT[], p_acct_period_start BIGINT[], p_acct_budget BIGINT[], p_usage JSONB, INOUT results JSONB DEFAULT NULL)
      LANGUAGE plpgsql AS $$
      BEGIN
        results := tollgate_ledger_batch(p_batch_id, p_now, p_op, p_request_id, p_key_id, p_amount, p_expires_at,
          p_op_now, p_period_start, p_budget, p_acct_period_start, p_acct_budget, p_usage);
        -- This transaction only: the operator's own setting applies to the one below.
        PERFORM set_config('synchronous_commit', 'off', true);
        COMMIT;
        -- A commit flushes only a transaction that wrote WAL of its own: this message is the smallest such
        -- write (migration 9).
        PERFORM pg_logical_emit_message(true, 'tollgate', '');
      END $$;
