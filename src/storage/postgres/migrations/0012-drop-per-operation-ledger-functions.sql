-- PostgreSQL migration 12: drop-per-operation-ledger-functions. Shipped: never edit it; add the next number.
--
-- tollgate_close_hold, tollgate_renew_hold and tollgate_grow_hold (migrations 1 to 4) each decided one
-- ledger operation per call. No code has called them since group commit (migration 5): the gateway's only
-- call is CALL tollgate_commit_ledger_batch (postgres/ledger-batcher.ts), and tollgate_ledger_batch states
-- their rules again over the batch's arrays without calling them. Dropped, so that a database holds the
-- ledger's rules once, in the function that runs (docs/adr/0036-frozen-migrations.md). IF EXISTS: what
-- matters is that they are gone, also where an operator dropped them already.

DROP FUNCTION IF EXISTS tollgate_close_hold(TEXT, TEXT, BIGINT, BIGINT, BIGINT, BIGINT);
DROP FUNCTION IF EXISTS tollgate_renew_hold(TEXT, BIGINT, BIGINT, BIGINT, BIGINT);
DROP FUNCTION IF EXISTS tollgate_grow_hold(TEXT, BIGINT, BIGINT, BIGINT, BIGINT);
