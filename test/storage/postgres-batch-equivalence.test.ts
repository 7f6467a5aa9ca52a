// The PostgreSQL batch decides exactly what one operation at a time decides. Seeded random rounds of holds,
// growths, renewals, settlements and releases — on few request ids, so one batch often carries several
// operations on the same hold, and on a key whose balance and budget run out, with the sweeper expiring
// holds between rounds — go to PostgreSQL all at once (each round one batch, in order) and to SQLite one
// at a time. Every answer, and the ledger afterwards, must be the same. Replay a failure with its seed.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Store } from '../../src/storage/types.js';
import { testNewKey } from '../support/key-fixture.js';
import { testUsage } from '../support/usage-fixture.js';
import { seededRng, type Rng } from '../support/seeded-random.js';
import { storeDialects, type TestStore } from '../support/store-dialects.js';

const SEEDS = [11, 12, 13, 14, 15];
const ROUNDS = 12;
const T0 = 1_800_000_000_000;

type Op =
  | { kind: 'hold'; id: string; amount: number; expiresAt: number }
  | { kind: 'grow'; id: string; amount: number }
  | { kind: 'renew'; id: string; expiresAt: number }
  | { kind: 'settle'; id: string; cost: number }
  | { kind: 'release'; id: string; withUsage: boolean };

/**
 * One round: operations on a handful of request ids (new ones and earlier ones), in a random order. As in
 * the gateway, a request id is held at most once (a second hold of one is an error whose form the two
 * dialects do not share) and ends once, settled or released; a renewal or growth may still come late.
 */
function roundOps(rng: Rng, round: number, now: number, earlier: string[], held: Set<string>, ended: Set<string>): Op[] {
  const ops: Op[] = [];
  const ids = [...earlier.slice(-6), ...Array.from({ length: 4 }, (_, i) => `r${round}-${i}`)];
  for (let n = rng.int(6, 16); n > 0; n--) {
    const id = rng.pick(ids);
    let kind = rng.weighted({ hold: 4, grow: 2, renew: 2, settle: 3, release: 2 });
    if (kind === 'hold' && held.has(id)) kind = 'settle';
    if ((kind === 'settle' || kind === 'release') && ended.has(id)) kind = 'renew';
    if (kind === 'hold') held.add(id);
    if (kind === 'settle' || kind === 'release') ended.add(id);
    // Some holds expire before the next round's sweep; the others outlive the test.
    const expiresAt = now + (rng.chance(0.3) ? 500 : 3_600_000);
    if (kind === 'hold') ops.push({ kind, id, amount: rng.int(100, 4_000), expiresAt });
    else if (kind === 'grow') ops.push({ kind, id, amount: rng.int(1, 1_500) });
    else if (kind === 'renew') ops.push({ kind, id, expiresAt });
    else if (kind === 'settle') ops.push({ kind, id, cost: rng.int(0, 5_000) });
    else ops.push({ kind, id, withUsage: rng.chance(0.5) });
  }
  return ops;
}

function apply(store: Store, op: Op, now: number, budget: { limit: number | null; periodStart: number }): Promise<unknown> {
  switch (op.kind) {
    case 'hold':
      return store.ledger.placeHold({ requestId: op.id, keyId: 'key_a', amount: op.amount, expiresAt: op.expiresAt, now, budget });
    case 'grow':
      return store.ledger.growHold({ requestId: op.id, amount: op.amount, now, budget });
    case 'renew':
      return store.ledger.renewHold({ requestId: op.id, expiresAt: op.expiresAt, now, budget });
    case 'settle':
      return store.ledger.settle({ requestId: op.id, cost: op.cost, usage: testUsage(op.id, op.cost, { time: now }), now, budget });
    case 'release':
      return store.ledger.release(op.id, op.withUsage ? testUsage(op.id, 0, { time: now }) : undefined, now);
  }
}

/** An answer, or the fact that it threw. */
async function settled(promise: Promise<unknown>): Promise<unknown> {
  try {
    return await promise;
  } catch {
    return 'threw';
  }
}

async function ledgerOf(store: TestStore): Promise<unknown> {
  const key = (await store.keys.get('key_a'))!;
  const audit = await store.ledger.audit('key_a');
  const entries = await store.query<{ request_id: string; kind: string; amount: number; seq: number }>(
    "SELECT request_id, kind, amount, seq FROM ledger_entries WHERE kind <> 'topup' ORDER BY request_id, kind, seq",
  );
  const holds = await store.query<{ request_id: string; amount: number; status: string; seq: number }>(
    'SELECT request_id, amount, status, seq FROM holds ORDER BY request_id',
  );
  const rows = await store.query<{ request_id: string; cost: number }>('SELECT request_id, cost FROM usage_records ORDER BY request_id');
  return {
    figures: { balance: key.balance, held: key.held, spent: key.spent, budgetSpent: key.budgetSpent },
    audit,
    entries: entries.map((e) => [e.request_id, e.kind, Number(e.amount), Number(e.seq)]),
    holds: holds.map((h) => [h.request_id, Number(h.amount), h.status, Number(h.seq)]),
    usage: rows.map((u) => [u.request_id, Number(u.cost)]),
  };
}

const [sqlite, postgres] = await storeDialects();

describe('the PostgreSQL batch decides what one operation at a time decides', { skip: postgres!.skip }, () => {
  for (const seed of SEEDS) {
    test(`seed ${seed}: ${ROUNDS} rounds, each one PostgreSQL batch, answer for answer the same as SQLite one at a time`, async () => {
      const rng = seededRng(seed);
      const one = await sqlite!.open();
      const batched = await postgres!.open();
      try {
        const balance = rng.int(20_000, 60_000);
        const budget = { limit: rng.chance(0.5) ? rng.int(10_000, 50_000) : null, periodStart: T0 };
        for (const store of [one, batched]) await store.keys.create(testNewKey('key_a', { initialBalance: balance, now: T0 }));
        const ids: string[] = [];
        const held = new Set<string>();
        const ended = new Set<string>();
        for (let round = 0; round < ROUNDS; round++) {
          const now = T0 + round * 1_000;
          const ops = roundOps(rng, round, now, ids, held, ended);
          for (const op of ops) if (!ids.includes(op.id)) ids.push(op.id);
          const expected: unknown[] = [];
          for (const op of ops) expected.push(await settled(apply(one, op, now, budget)));
          // Not awaited one by one: the whole round waits in the batcher and goes as one batch, in order.
          const actual = await Promise.all(ops.map((op) => settled(apply(batched, op, now, budget))));
          assert.deepEqual(actual, expected, `seed ${seed}, round ${round}: ${JSON.stringify(ops)}`);
          const sweptAt = now + 999;
          assert.equal(await batched.ledger.expireHolds(sweptAt, 1_000), await one.ledger.expireHolds(sweptAt, 1_000), `seed ${seed}, round ${round}: the sweep`);
        }
        assert.deepEqual(await ledgerOf(batched), await ledgerOf(one), `seed ${seed}: the ledger afterwards`);
        // Every hold that expired before the last sweep has been released by it.
        const scope = { keyId: undefined, staleBefore: T0 + ROUNDS * 1_000 - 1 };
        assert.deepEqual(await one.ledger.findViolations(scope), [], `seed ${seed}: invariants (one at a time)`);
        assert.deepEqual(await batched.ledger.findViolations(scope), [], `seed ${seed}: invariants (batched)`);
      } finally {
        await one.close();
        await batched.close();
      }
    });
  }
});
