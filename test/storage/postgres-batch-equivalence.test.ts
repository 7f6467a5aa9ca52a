// The PostgreSQL batch decides exactly what one operation at a time decides. Seeded random rounds of holds,
// growths, renewals, settlements and releases — on few request ids, so one batch often carries several
// operations on the same hold, and on a key whose balance and budget run out, with the sweeper expiring
// holds between rounds — go to PostgreSQL all at once (each round one batch, in order) and to SQLite one
// at a time. Every answer, and the ledger afterwards, must be the same. Replay a failure with its seed.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { BudgetWindow, Store } from '../../src/storage/types.js';
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

/** Which key each request id is held on, and the budget windows every operation runs under. */
interface Caps {
  keyOf(id: string): string;
  budgetOf(keyId: string): BudgetWindow;
  readonly accountBudget?: BudgetWindow;
}

const ONE_KEY = (budget: BudgetWindow): Caps => ({ keyOf: () => 'key_a', budgetOf: () => budget });

function apply(store: Store, op: Op, now: number, caps: Caps): Promise<unknown> {
  const keyId = caps.keyOf(op.id);
  const budget = caps.budgetOf(keyId);
  const accountBudget = caps.accountBudget ? { accountBudget: caps.accountBudget } : {};
  switch (op.kind) {
    case 'hold':
      return store.ledger.placeHold({ requestId: op.id, keyId, amount: op.amount, expiresAt: op.expiresAt, now, budget, ...accountBudget });
    case 'grow':
      return store.ledger.growHold({ requestId: op.id, amount: op.amount, now, budget, ...accountBudget });
    case 'renew':
      return store.ledger.renewHold({ requestId: op.id, expiresAt: op.expiresAt, now, budget, ...accountBudget });
    case 'settle':
      return store.ledger.settle({ requestId: op.id, cost: op.cost, usage: testUsage(op.id, op.cost, { time: now, keyId }), now, budget, ...accountBudget });
    case 'release':
      return store.ledger.release(op.id, op.withUsage ? testUsage(op.id, 0, { time: now, keyId }) : undefined, now);
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
          for (const op of ops) expected.push(await settled(apply(one, op, now, ONE_KEY(budget))));
          // Not awaited one by one: the whole round waits in the batcher and goes as one batch, in order.
          const actual = await Promise.all(ops.map((op) => settled(apply(batched, op, now, ONE_KEY(budget)))));
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

/** The account's figures and each of its keys', with every entry (naming its account) and hold. */
async function accountLedgerOf(store: TestStore, keyIds: readonly string[]): Promise<unknown> {
  const account = (await store.accounts.get('acct_team'))!;
  const keys = [];
  for (const id of keyIds) {
    const key = (await store.keys.get(id))!;
    keys.push({ id, held: key.held, spent: key.spent, budgetSpent: key.budgetSpent, budgetPeriodStart: key.budgetPeriodStart, audit: await store.ledger.audit(id) });
  }
  const entries = await store.query<{ account_id: string; key_id: string | null; request_id: string; kind: string; amount: number; seq: number }>(
    'SELECT account_id, key_id, request_id, kind, amount, seq FROM ledger_entries ORDER BY request_id, kind, seq',
  );
  const holds = await store.query<{ request_id: string; key_id: string; amount: number; status: string; seq: number }>(
    'SELECT request_id, key_id, amount, status, seq FROM holds ORDER BY request_id',
  );
  const rows = await store.query<{ request_id: string; key_id: string; cost: number }>('SELECT request_id, key_id, cost FROM usage_records ORDER BY request_id');
  return {
    account: { balance: account.balance, held: account.held, spent: account.spent, status: account.status, budgetSpent: account.budgetSpent, budgetPeriodStart: account.budgetPeriodStart },
    keys,
    entries: entries.map((e) => [e.account_id, e.key_id, e.request_id, e.kind, Number(e.amount), Number(e.seq)]),
    holds: holds.map((h) => [h.request_id, h.key_id, Number(h.amount), h.status, Number(h.seq)]),
    usage: rows.map((u) => [u.request_id, u.key_id, Number(u.cost)]),
  };
}

const ACCOUNT_SEEDS = [21, 22, 23, 24, 25, 26];
const KEY_IDS = ['key_a', 'key_b', 'key_c', 'key_d'];

// The same comparison over an account's rules (docs/adr/0047-accounts.md): four keys of one account —
// one with no cap of its own, one with a credit limit, one with a budget, one with both — under an
// account budget (some seeds), with the account suspended and resumed and topped up between rounds.
describe('the PostgreSQL batch decides what one operation at a time decides, over one account and its keys', { skip: postgres!.skip }, () => {
  for (const seed of ACCOUNT_SEEDS) {
    test(`seed ${seed}: ${ROUNDS} rounds over 4 keys of one account, answer for answer the same as SQLite one at a time`, async () => {
      const rng = seededRng(seed);
      const one = await sqlite!.open();
      const batched = await postgres!.open();
      try {
        const balance = rng.int(20_000, 60_000);
        const creditLimit = rng.int(5_000, 20_000);
        const keyBudget = rng.int(5_000, 20_000);
        const budgets: Record<string, BudgetWindow> = {
          key_a: { limit: null, periodStart: T0 },
          key_b: { limit: null, periodStart: T0 },
          key_c: { limit: keyBudget, periodStart: T0 },
          key_d: { limit: keyBudget, periodStart: T0 },
        };
        const accountBudget = rng.chance(0.6) ? { limit: rng.int(15_000, 50_000), periodStart: T0 } : undefined;
        const keyOfId = new Map<string, string>();
        const caps: Caps = {
          keyOf(id) {
            let key = keyOfId.get(id);
            if (key === undefined) keyOfId.set(id, (key = KEY_IDS[(id.length * 7 + id.charCodeAt(id.length - 1)) % KEY_IDS.length]!));
            return key;
          },
          budgetOf: (keyId) => budgets[keyId]!,
          ...(accountBudget ? { accountBudget } : {}),
        };
        for (const store of [one, batched]) {
          await store.accounts.create({ id: 'acct_team', name: 'team', initialBalance: balance, topupRequestId: 'topup-team', now: T0 });
          for (const id of KEY_IDS) {
            const limited = id === 'key_b' || id === 'key_d';
            await store.keys.create(testNewKey(id, { accountId: 'acct_team', creditLimit: limited ? creditLimit : null, now: T0 }));
          }
        }
        const ids: string[] = [];
        const held = new Set<string>();
        const ended = new Set<string>();
        let suspended = false;
        for (let round = 0; round < ROUNDS; round++) {
          const now = T0 + round * 1_000;
          const ops = roundOps(rng, round, now, ids, held, ended);
          for (const op of ops) if (!ids.includes(op.id)) ids.push(op.id);
          const expected: unknown[] = [];
          for (const op of ops) expected.push(await settled(apply(one, op, now, caps)));
          const actual = await Promise.all(ops.map((op) => settled(apply(batched, op, now, caps))));
          assert.deepEqual(actual, expected, `seed ${seed}, round ${round}: ${JSON.stringify(ops)}`);
          const sweptAt = now + 999;
          assert.equal(await batched.ledger.expireHolds(sweptAt, 1_000), await one.ledger.expireHolds(sweptAt, 1_000), `seed ${seed}, round ${round}: the sweep`);
          if (rng.chance(suspended ? 0.6 : 0.15)) {
            suspended = !suspended;
            for (const store of [one, batched]) await store.accounts.update('acct_team', { status: suspended ? 'suspended' : 'active' });
          }
          if (rng.chance(0.25)) {
            const credit = { accountId: 'acct_team', kind: 'topup' as const, amount: rng.int(1_000, 10_000), requestId: `topup-${round}`, now, note: null };
            assert.equal(await batched.accounts.credit(credit), await one.accounts.credit(credit), `seed ${seed}, round ${round}: the top-up`);
          }
        }
        assert.deepEqual(await accountLedgerOf(batched, KEY_IDS), await accountLedgerOf(one, KEY_IDS), `seed ${seed}: the ledger afterwards`);
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
