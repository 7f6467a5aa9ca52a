// Admission over one account's money and its keys' caps, under contention (docs/adr/0047-accounts.md).
// Two stores on one database (two gateways: on PostgreSQL two pools whose batches lock the account's row
// and then its keys' rows; on SQLite two connections) place 500 holds at once over 10 keys of one account
// whose balance covers only part of them; some keys carry a credit limit, some a budget; top-ups of the
// account (by account and through a key) race them. Then every hold is settled (some after the sweeper
// expired it: a late capture) or released, again at once. The account is never overdrawn, no key passes
// its credit limit or budget, every admitted set fits, the keys' spend adds up to the account's, and the
// audit finds nothing.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { Admission, BudgetWindow, Store } from '../../src/storage/types.js';
import { testNewKey } from '../support/key-fixture.js';
import { freshPgSchema } from '../support/postgres.js';
import { seededRng } from '../support/seeded-random.js';
import { storeDialects } from '../support/store-dialects.js';
import { testUsage } from '../support/usage-fixture.js';

const T0 = 1_800_000_000_000;
const PERIOD = T0;
const HOLDS = 500;
const KEYS = 10;
const BALANCE = 600_000;
const TOPUPS = 6;
const TOPUP = 10_000;
/** Keys 0–2 may spend at most this; keys 3–4 hold at most this in the budget period; the rest only the account's money. */
const CREDIT_LIMIT = 40_000;
const KEY_BUDGET = 50_000;

const keyId = (i: number) => `key_${i.toString(16).padStart(4, '0')}`;
const creditLimitOf = (i: number) => (i < 3 ? CREDIT_LIMIT : null);
const budgetOf = (i: number): BudgetWindow => ({ limit: i === 3 || i === 4 ? KEY_BUDGET : null, periodStart: PERIOD });

/** Two stores on one fresh database, and how to remove it. */
interface Pair {
  readonly stores: readonly [Store, Store];
  close(): Promise<void>;
}

async function openPair(dialect: 'sqlite' | 'postgres'): Promise<Pair> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-accounts-'));
    const file = join(dir, 'test.db');
    const stores = [openSqliteStore(file), openSqliteStore(file)] as const;
    return {
      stores,
      async close() {
        for (const store of stores) await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const schema = await freshPgSchema();
  const first = await openPostgresStore(schema.url, { maxConnections: 4 });
  const second = await openPostgresStore(schema.url, { maxConnections: 4 });
  return {
    stores: [first, second],
    async close() {
      await first.close();
      await second.close();
      await schema.drop();
    },
  };
}

interface Placed {
  readonly requestId: string;
  readonly key: number;
  readonly amount: number;
  readonly expiresAt: number;
  readonly store: Store;
  readonly answer: Admission;
}

for (const dialect of await storeDialects()) {
  describe(`${dialect.name}: one account, many keys, many holds at once`, { skip: dialect.skip }, () => {
    test(`${HOLDS} concurrent holds over ${KEYS} keys never overdraw the account nor pass a key's cap`, async () => {
      const rng = seededRng(47);
      const pair = await openPair(dialect.name);
      const [a, b] = pair.stores;
      try {
        await a.accounts.create({ id: 'acct_team', name: 'team', initialBalance: BALANCE, topupRequestId: 'topup-team', now: T0 });
        for (let i = 0; i < KEYS; i++) {
          await a.keys.create(testNewKey(keyId(i), { accountId: 'acct_team', creditLimit: creditLimitOf(i), now: T0 }));
        }
        // A hold every key's caps would mostly admit: together far more than the account holds.
        const plans = Array.from({ length: HOLDS }, (_, n) => ({
          requestId: `r${n}`,
          key: rng.int(0, KEYS - 1),
          amount: rng.int(1_000, 6_000),
          // Some expire before the settlements: the sweeper releases them and they are captured late.
          expiresAt: T0 + (rng.chance(0.1) ? 10 : 3_600_000),
          store: rng.chance(0.5) ? a : b,
        }));
        const topups = Array.from({ length: TOPUPS }, (_, n) =>
          (n % 2 === 0 ? a : b).accounts.credit({
            ...(n % 3 === 0 ? { keyId: keyId(n) } : { accountId: 'acct_team' }),
            kind: 'topup',
            amount: TOPUP,
            requestId: `topup-${n}`,
            now: T0 + 1,
            note: null,
          }),
        );
        const placed: Placed[] = await Promise.all(
          plans.map(async (p) => ({
            ...p,
            answer: await p.store.ledger.placeHold({ requestId: p.requestId, keyId: keyId(p.key), amount: p.amount, expiresAt: p.expiresAt, now: T0 + 1, budget: budgetOf(p.key) }),
          })),
        );
        assert.deepEqual(await Promise.all(topups), Array(TOPUPS).fill('applied'));

        const admitted = placed.filter((p) => p.answer.admitted);
        const refused = placed.filter((p) => !p.answer.admitted);
        assert.ok(admitted.length > 50 && refused.length > 50, `the balance covers only part of the holds (${admitted.length} admitted)`);
        for (const p of refused) {
          assert.ok(!p.answer.admitted && ['balance', 'credit_limit', 'budget'].includes(p.answer.reason), `refused for a cap: ${JSON.stringify(p.answer)}`);
        }
        const reasons = new Set(refused.map((p) => !p.answer.admitted && p.answer.reason));
        assert.ok(reasons.has('balance') && reasons.has('credit_limit') && reasons.has('budget'), `every cap refused some: ${[...reasons].join(', ')}`);

        // The admitted set fits: in the account's money, in each key's credit limit and budget.
        const total = BALANCE + TOPUPS * TOPUP;
        const heldBy = (i: number) => admitted.filter((p) => p.key === i).reduce((sum, p) => sum + p.amount, 0);
        const account = (await a.accounts.get('acct_team'))!;
        assert.equal(account.balance, total);
        assert.equal(account.held, admitted.reduce((sum, p) => sum + p.amount, 0), 'the account holds exactly the admitted holds');
        assert.ok(account.balance - account.held >= 0, 'the account is not overdrawn');
        for (let i = 0; i < KEYS; i++) {
          const key = (await a.keys.get(keyId(i)))!;
          assert.equal(key.held, heldBy(i), `${keyId(i)} holds exactly its admitted holds`);
          if (creditLimitOf(i) !== null) assert.ok(key.held <= CREDIT_LIMIT, `${keyId(i)} within its credit limit`);
          if (budgetOf(i).limit !== null) assert.ok(key.held <= KEY_BUDGET, `${keyId(i)} within its budget`);
        }
        assert.deepEqual(await a.ledger.findViolations({ keyId: undefined, staleBefore: T0 }), []);

        // Every hold ends at once: the expired ones are swept first (some settlements race the sweep),
        // then each is settled at a cost up to its amount, or released.
        const sweep = b.ledger.expireHolds(T0 + 50, 1_000);
        const ends = admitted.map((p) => {
          if (rng.chance(0.3)) return p.store.ledger.release(p.requestId, testUsage(p.requestId, 0, { keyId: keyId(p.key), time: T0 + 60 }), T0 + 60);
          const cost = rng.int(0, p.amount);
          const usage = testUsage(p.requestId, cost, { keyId: keyId(p.key), time: T0 + 60 });
          return p.store.ledger.settle({ requestId: p.requestId, cost, usage, now: T0 + 60, budget: budgetOf(p.key) });
        });
        await Promise.all([sweep, ...ends]);
        await a.ledger.expireHolds(T0 + 50, 1_000);

        const after = (await a.accounts.get('acct_team'))!;
        const keys = await a.accounts.keys('acct_team');
        assert.equal(keys.length, KEYS);
        assert.equal(after.held, 0, 'no money is held once every hold ended');
        assert.ok(after.balance >= 0 && after.balance - after.held >= 0, 'the account is not overdrawn');
        assert.equal(after.balance, total - after.spent, 'conservation: what was put in = what is left + what was spent');
        assert.equal(keys.reduce((sum, k) => sum + k.spent, 0), after.spent, "Σ keys' spent = the account's spent");
        for (const key of keys) {
          assert.equal(key.held, 0);
          const i = Number.parseInt(key.id.slice(4), 16);
          if (creditLimitOf(i) !== null) assert.ok(key.spent <= CREDIT_LIMIT, `${key.id} spent ${key.spent} within its credit limit`);
          if (budgetOf(i).limit !== null) assert.ok(key.budgetSpent <= KEY_BUDGET, `${key.id} spent ${key.budgetSpent} within its budget`);
        }
        assert.deepEqual(await a.ledger.findViolations({ keyId: undefined, staleBefore: T0 + 100 }), []);
      } finally {
        await pair.close();
      }
    });
  });
}
