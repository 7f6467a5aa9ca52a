// The ledger's rules, as one table: (state, operation) → (outcome, state′). The rules live twice — as
// TypeScript transactions for SQLite (storage/sqlite/ledger-rules.ts) and in PL/pgSQL for PostgreSQL
// (tollgate_ledger_batch, storage/postgres/migrations/) — and this table is their one specification, run
// on both dialects. Each case builds its starting state through the store (a top-up, an earlier request
// captured in this budget period, another request's active hold, the case's own hold), checks that the
// state is the one described, applies ONE operation, and asserts its answer and the whole state after:
// the key's balance, held, spent and budget spend (and its period), the hold's status, amount and expiry,
// the ledger entries the operation wrote and the usage row it wrote. The seeded comparison of many batched
// operations is postgres-batch-equivalence.test.ts. Where the dialects disagree, a case pins each one's
// answer under `dialects` and says why.
import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { BudgetWindow } from '../../src/storage/types.js';
import { testNewKey } from '../support/key-fixture.js';
import { storeDialects, type TestStore } from '../support/store-dialects.js';
import { testUsage } from '../support/usage-fixture.js';

const T0 = 1_800_000_000_000;
/** Every operation happens at NOW: after an overdue hold's expiry (T0 + 100) and an expired key's (T0 + 150). */
const NOW = T0 + 200;
const TTL = 600_000;
/** The budget period every starting state counts its spend in; NEXT_PERIOD is the one after it. */
const PERIOD = T0;
const NEXT_PERIOD = T0 + 86_400_000;

type HoldStatus = 'active' | 'expired' | 'captured' | 'released';

interface Given {
  /** The key's balance at the start (its top-up less what was captured). */
  readonly balance: number;
  /** Captured earlier in this budget period: the key's spent and its budget spend. */
  readonly spent?: number;
  /** Held for another request of the key (an active hold that outlives the case). */
  readonly otherHeld?: number;
  readonly key?: 'revoked' | 'expired';
  /**
   * The case's own request `r`: its hold's amount and status. `overdue`: active, its expiry passed, not yet
   * swept. A captured hold was captured at its amount (counted in `spent`).
   */
  readonly hold?: { readonly amount: number; readonly status: HoldStatus; readonly overdue?: true };
}

type Op =
  | { readonly op: 'placeHold'; readonly amount: number; readonly keyId?: string; readonly requestId?: 'r' }
  | { readonly op: 'settle'; readonly cost: number; readonly usageCost?: number }
  | { readonly op: 'release'; readonly usageCost?: number }
  | { readonly op: 'renewHold' }
  | { readonly op: 'growHold'; readonly amount: number }
  | { readonly op: 'expireHolds' };

interface State {
  readonly balance: number;
  readonly held: number;
  readonly spent: number;
  readonly budgetSpent: number;
  /** The period the budget spend counts in: this one unless said (none: no admission or capture yet). */
  readonly period?: 'next' | 'none';
  /** The hold of the request the operation names: `<status> <amount> until <expires_at − T0>`; null: none. */
  readonly hold: string | null;
  /** The ledger entries the operation wrote, in order: `<kind>#<seq> <amount>`. */
  readonly entries: readonly string[];
  /** The cost on the usage row the operation wrote; absent: it wrote none. */
  readonly usage?: number;
}

interface Expected {
  readonly outcome: unknown;
  readonly then: State;
}

interface Case extends Expected {
  readonly name: string;
  readonly given: Given;
  /** The budget the operation runs under (none unless said), in this period unless `newPeriod`. */
  readonly budget?: number;
  readonly newPeriod?: true;
  readonly op: Op;
  /** One dialect's answer where it differs from the other's (reported, not silently made equal). */
  readonly dialects?: { readonly sqlite?: Expected; readonly postgres?: Expected };
}

const refused = (reason: 'balance' | 'budget' | 'inactive', available: number, budgetUsed: number, keyActive = true) => ({
  admitted: false,
  reason,
  available,
  budgetUsed,
  keyActive,
});

const CASES: readonly Case[] = [
  // placeHold: request n (r where said), for `amount`, until NOW + TTL.
  {
    name: 'placeHold: admitted when the available balance covers it',
    given: { balance: 10_000 },
    op: { op: 'placeHold', amount: 1_000 },
    outcome: { admitted: true },
    then: { balance: 10_000, held: 1_000, spent: 0, budgetSpent: 0, hold: 'active 1000 until 600200', entries: ['hold#0 1000'] },
  },
  {
    name: 'placeHold: admitted when it takes exactly the available balance',
    given: { balance: 10_000, otherHeld: 9_000 },
    op: { op: 'placeHold', amount: 1_000 },
    outcome: { admitted: true },
    then: { balance: 10_000, held: 10_000, spent: 0, budgetSpent: 0, hold: 'active 1000 until 600200', entries: ['hold#0 1000'] },
  },
  {
    name: 'placeHold: refused for the balance when balance − held is short of it',
    given: { balance: 10_000, otherHeld: 9_500 },
    op: { op: 'placeHold', amount: 1_000 },
    outcome: refused('balance', 500, 9_500),
    then: { balance: 10_000, held: 9_500, spent: 0, budgetSpent: 0, hold: null, entries: [] },
  },
  {
    name: 'placeHold: refused for the budget when spent + held + it exceed the budget',
    given: { balance: 10_000, spent: 3_000, otherHeld: 1_000 },
    budget: 4_500,
    op: { op: 'placeHold', amount: 1_000 },
    outcome: refused('budget', 9_000, 4_000),
    then: { balance: 10_000, held: 1_000, spent: 3_000, budgetSpent: 3_000, hold: null, entries: [] },
  },
  {
    name: 'placeHold: admitted when spent + held + it equal the budget',
    given: { balance: 10_000, spent: 3_000, otherHeld: 1_000 },
    budget: 5_000,
    op: { op: 'placeHold', amount: 1_000 },
    outcome: { admitted: true },
    then: { balance: 10_000, held: 2_000, spent: 3_000, budgetSpent: 3_000, hold: 'active 1000 until 600200', entries: ['hold#0 1000'] },
  },
  {
    name: 'placeHold: a new budget period counts the spend afresh (admitted; the period moves on)',
    given: { balance: 10_000, spent: 3_000 },
    budget: 3_500,
    newPeriod: true,
    op: { op: 'placeHold', amount: 1_000 },
    outcome: { admitted: true },
    then: { balance: 10_000, held: 1_000, spent: 3_000, budgetSpent: 0, period: 'next', hold: 'active 1000 until 600200', entries: ['hold#0 1000'] },
  },
  {
    name: 'placeHold: refused as inactive for a revoked key',
    given: { balance: 10_000, key: 'revoked' },
    op: { op: 'placeHold', amount: 1_000 },
    outcome: refused('inactive', 10_000, 0, false),
    then: { balance: 10_000, held: 0, spent: 0, budgetSpent: 0, period: 'none', hold: null, entries: [] },
  },
  {
    name: 'placeHold: refused as inactive for a key past its expiry',
    given: { balance: 10_000, key: 'expired' },
    op: { op: 'placeHold', amount: 1_000 },
    outcome: refused('inactive', 10_000, 0, false),
    then: { balance: 10_000, held: 0, spent: 0, budgetSpent: 0, period: 'none', hold: null, entries: [] },
  },
  {
    name: 'placeHold: a request id that already has a hold is an error, and nothing changes',
    given: { balance: 10_000, hold: { amount: 1_000, status: 'active' } },
    op: { op: 'placeHold', amount: 500, requestId: 'r' },
    outcome: 'threw',
    then: { balance: 10_000, held: 1_000, spent: 0, budgetSpent: 0, hold: 'active 1000 until 600000', entries: [] },
  },
  {
    name: 'placeHold: refused as inactive for an unknown key',
    given: { balance: 10_000 },
    op: { op: 'placeHold', amount: 1_000, keyId: 'key_unknown' },
    outcome: refused('inactive', 0, 0, false),
    then: { balance: 10_000, held: 0, spent: 0, budgetSpent: 0, period: 'none', hold: null, entries: [] },
  },

  // settle: request r, at `cost`, with a usage row costing `usageCost` (the cost unless said).
  {
    name: 'settle: an active hold is captured at the cost, its hold released',
    given: { balance: 10_000, hold: { amount: 1_000, status: 'active' } },
    op: { op: 'settle', cost: 400 },
    outcome: { outcome: 'captured', charged: 400 },
    then: { balance: 9_600, held: 0, spent: 400, budgetSpent: 400, hold: 'captured 1000 until 600000', entries: ['release#0 1000', 'capture#0 400'], usage: 400 },
  },
  {
    name: 'settle: a cost above the hold is captured in full',
    given: { balance: 10_000, hold: { amount: 1_000, status: 'active' } },
    op: { op: 'settle', cost: 1_500 },
    outcome: { outcome: 'captured', charged: 1_500 },
    then: { balance: 8_500, held: 0, spent: 1_500, budgetSpent: 1_500, hold: 'captured 1000 until 600000', entries: ['release#0 1000', 'capture#0 1500'], usage: 1_500 },
  },
  {
    name: 'settle: a cost above the hold and the balance is captured in full, the balance going below zero',
    given: { balance: 1_000, hold: { amount: 1_000, status: 'active' } },
    op: { op: 'settle', cost: 1_500 },
    outcome: { outcome: 'captured', charged: 1_500 },
    then: { balance: -500, held: 0, spent: 1_500, budgetSpent: 1_500, hold: 'captured 1000 until 600000', entries: ['release#0 1000', 'capture#0 1500'], usage: 1_500 },
  },
  {
    name: 'settle: an active hold past its expiry, not yet swept, is captured',
    given: { balance: 10_000, hold: { amount: 1_000, status: 'active', overdue: true } },
    op: { op: 'settle', cost: 400 },
    outcome: { outcome: 'captured', charged: 400 },
    then: { balance: 9_600, held: 0, spent: 400, budgetSpent: 400, hold: 'captured 1000 until 100', entries: ['release#0 1000', 'capture#0 400'], usage: 400 },
  },
  {
    name: 'settle: the first capture of a new budget period starts its spend at the cost',
    given: { balance: 10_000, spent: 3_000, hold: { amount: 1_000, status: 'active' } },
    newPeriod: true,
    op: { op: 'settle', cost: 400 },
    outcome: { outcome: 'captured', charged: 400 },
    then: { balance: 9_600, held: 0, spent: 3_400, budgetSpent: 400, period: 'next', hold: 'captured 1000 until 600000', entries: ['release#0 1000', 'capture#0 400'], usage: 400 },
  },
  {
    name: 'settle: late (the hold expired) is re-admitted and charged in full when the balance covers it again',
    given: { balance: 10_000, hold: { amount: 1_000, status: 'expired' } },
    op: { op: 'settle', cost: 400 },
    outcome: { outcome: 'late', charged: 400 },
    then: { balance: 9_600, held: 0, spent: 400, budgetSpent: 400, hold: 'captured 1000 until 100', entries: ['capture#0 400'], usage: 400 },
  },
  {
    name: 'settle: late, a cost above the hold is charged in full when what the hold covered is available',
    given: { balance: 1_200, hold: { amount: 1_000, status: 'expired' } },
    op: { op: 'settle', cost: 1_500 },
    outcome: { outcome: 'late', charged: 1_500 },
    then: { balance: -300, held: 0, spent: 1_500, budgetSpent: 1_500, hold: 'captured 1000 until 100', entries: ['capture#0 1500'], usage: 1_500 },
  },
  {
    name: 'settle: late, only what the cost takes of the hold must be available again',
    given: { balance: 1_000, otherHeld: 500, hold: { amount: 1_000, status: 'expired' } },
    op: { op: 'settle', cost: 400 },
    outcome: { outcome: 'late', charged: 400 },
    then: { balance: 600, held: 500, spent: 400, budgetSpent: 400, hold: 'captured 1000 until 100', entries: ['capture#0 400'], usage: 400 },
  },
  {
    name: 'settle: late in a new budget period counts the budget from zero',
    given: { balance: 10_000, spent: 3_000, hold: { amount: 1_000, status: 'expired' } },
    budget: 3_500,
    newPeriod: true,
    op: { op: 'settle', cost: 800 },
    outcome: { outcome: 'late', charged: 800 },
    then: { balance: 9_200, held: 0, spent: 3_800, budgetSpent: 800, period: 'next', hold: 'captured 1000 until 100', entries: ['capture#0 800'], usage: 800 },
  },
  {
    name: 'settle: late on a key revoked since is still charged (late admission checks money, not status)',
    given: { balance: 10_000, key: 'revoked', hold: { amount: 1_000, status: 'expired' } },
    op: { op: 'settle', cost: 400 },
    outcome: { outcome: 'late', charged: 400 },
    then: { balance: 9_600, held: 0, spent: 400, budgetSpent: 400, hold: 'captured 1000 until 100', entries: ['capture#0 400'], usage: 400 },
  },
  {
    name: 'settle: late and the balance no longer covers it: capped at the available balance',
    given: { balance: 1_000, otherHeld: 700, hold: { amount: 1_000, status: 'expired' } },
    op: { op: 'settle', cost: 800 },
    outcome: { outcome: 'late-capped', charged: 300 },
    then: { balance: 700, held: 700, spent: 300, budgetSpent: 300, hold: 'captured 1000 until 100', entries: ['capture#0 300'], usage: 300 },
  },
  {
    name: 'settle: late and nothing available: capped at zero, still recorded',
    given: { balance: 1_000, otherHeld: 1_000, hold: { amount: 1_000, status: 'expired' } },
    op: { op: 'settle', cost: 400 },
    outcome: { outcome: 'late-capped', charged: 0 },
    then: { balance: 1_000, held: 1_000, spent: 0, budgetSpent: 0, hold: 'captured 1000 until 100', entries: ['capture#0 0'], usage: 0 },
  },
  {
    name: 'settle: late and the budget no longer covers it: capped at what the budget has left',
    given: { balance: 10_000, spent: 3_000, hold: { amount: 1_000, status: 'expired' } },
    budget: 3_500,
    op: { op: 'settle', cost: 800 },
    outcome: { outcome: 'late-capped', charged: 500 },
    then: { balance: 9_500, held: 0, spent: 3_500, budgetSpent: 3_500, hold: 'captured 1000 until 100', entries: ['capture#0 500'], usage: 500 },
  },
  {
    name: 'settle: a captured hold is a duplicate: nothing charged or written',
    given: { balance: 10_000, spent: 1_000, hold: { amount: 1_000, status: 'captured' } },
    op: { op: 'settle', cost: 400 },
    outcome: { outcome: 'duplicate', charged: 0 },
    then: { balance: 10_000, held: 0, spent: 1_000, budgetSpent: 1_000, hold: 'captured 1000 until 600000', entries: [] },
  },
  {
    name: 'settle: a released hold is a duplicate: nothing charged or written',
    given: { balance: 10_000, hold: { amount: 1_000, status: 'released' } },
    op: { op: 'settle', cost: 400 },
    outcome: { outcome: 'duplicate', charged: 0 },
    then: { balance: 10_000, held: 0, spent: 0, budgetSpent: 0, hold: 'released 1000 until 600000', entries: [] },
  },
  {
    name: 'settle: no hold is missing: nothing charged or written, not even the usage row',
    given: { balance: 10_000 },
    op: { op: 'settle', cost: 400 },
    outcome: { outcome: 'missing', charged: 0 },
    then: { balance: 10_000, held: 0, spent: 0, budgetSpent: 0, period: 'none', hold: null, entries: [] },
  },
  {
    name: 'settle: the usage row records what was charged, whatever cost it carried',
    given: { balance: 10_000, hold: { amount: 1_000, status: 'active' } },
    op: { op: 'settle', cost: 400, usageCost: 900 },
    outcome: { outcome: 'captured', charged: 400 },
    then: { balance: 9_600, held: 0, spent: 400, budgetSpent: 400, hold: 'captured 1000 until 600000', entries: ['release#0 1000', 'capture#0 400'], usage: 400 },
    // DISAGREEMENT: SQLite writes the usage row as given when the capture is in full (only a late-capped
    // row is rewritten to the charge); PostgreSQL writes LEAST(charged, row's cost). The gateway always
    // passes a row whose cost is the settled cost, so no request shows it; the store contract
    // (types.ts: "its cost: what was charged") is PostgreSQL's answer.
    dialects: {
      sqlite: {
        outcome: { outcome: 'captured', charged: 400 },
        then: { balance: 9_600, held: 0, spent: 400, budgetSpent: 400, hold: 'captured 1000 until 600000', entries: ['release#0 1000', 'capture#0 400'], usage: 900 },
      },
    },
  },

  // release: request r, with a usage row costing `usageCost` (none unless said).
  {
    name: 'release: an active hold is released, nothing charged, the usage row written',
    given: { balance: 10_000, hold: { amount: 1_000, status: 'active' } },
    op: { op: 'release', usageCost: 0 },
    outcome: 'released',
    then: { balance: 10_000, held: 0, spent: 0, budgetSpent: 0, hold: 'released 1000 until 600000', entries: ['release#0 1000'], usage: 0 },
  },
  {
    name: 'release: without a usage row, only the hold is released',
    given: { balance: 10_000, hold: { amount: 1_000, status: 'active' } },
    op: { op: 'release' },
    outcome: 'released',
    then: { balance: 10_000, held: 0, spent: 0, budgetSpent: 0, hold: 'released 1000 until 600000', entries: ['release#0 1000'] },
  },
  {
    name: 'release: an expired hold stays expired (the sweeper released it); the usage row is written',
    given: { balance: 10_000, hold: { amount: 1_000, status: 'expired' } },
    op: { op: 'release', usageCost: 0 },
    outcome: 'expired',
    then: { balance: 10_000, held: 0, spent: 0, budgetSpent: 0, hold: 'expired 1000 until 100', entries: [], usage: 0 },
  },
  {
    name: 'release: a captured hold is a duplicate: nothing written',
    given: { balance: 10_000, spent: 1_000, hold: { amount: 1_000, status: 'captured' } },
    op: { op: 'release', usageCost: 0 },
    outcome: 'duplicate',
    then: { balance: 10_000, held: 0, spent: 1_000, budgetSpent: 1_000, hold: 'captured 1000 until 600000', entries: [] },
  },
  {
    name: 'release: a released hold is a duplicate: nothing written',
    given: { balance: 10_000, hold: { amount: 1_000, status: 'released' } },
    op: { op: 'release', usageCost: 0 },
    outcome: 'duplicate',
    then: { balance: 10_000, held: 0, spent: 0, budgetSpent: 0, hold: 'released 1000 until 600000', entries: [] },
  },
  {
    name: 'release: no hold is missing: nothing written, not even the usage row',
    given: { balance: 10_000 },
    op: { op: 'release', usageCost: 0 },
    outcome: 'missing',
    then: { balance: 10_000, held: 0, spent: 0, budgetSpent: 0, period: 'none', hold: null, entries: [] },
  },
  {
    name: 'release: the usage row records no charge, whatever cost it carried',
    given: { balance: 10_000, hold: { amount: 1_000, status: 'active' } },
    op: { op: 'release', usageCost: 300 },
    outcome: 'released',
    then: { balance: 10_000, held: 0, spent: 0, budgetSpent: 0, hold: 'released 1000 until 600000', entries: ['release#0 1000'], usage: 0 },
    // DISAGREEMENT: SQLite writes a release's usage row as given; PostgreSQL writes LEAST(0, row's cost).
    // The gateway releases with a row costing 0 (pipeline/request-bill.ts), so no request shows it.
    dialects: {
      sqlite: {
        outcome: 'released',
        then: { balance: 10_000, held: 0, spent: 0, budgetSpent: 0, hold: 'released 1000 until 600000', entries: ['release#0 1000'], usage: 300 },
      },
    },
  },

  // renewHold: request r, until NOW + TTL.
  {
    name: 'renewHold: an active hold is extended, nothing else changes',
    given: { balance: 10_000, hold: { amount: 1_000, status: 'active' } },
    op: { op: 'renewHold' },
    outcome: { outcome: 'extended' },
    then: { balance: 10_000, held: 1_000, spent: 0, budgetSpent: 0, hold: 'active 1000 until 600200', entries: [] },
  },
  {
    name: 'renewHold: an active hold past its expiry, not yet swept, is extended',
    given: { balance: 10_000, hold: { amount: 1_000, status: 'active', overdue: true } },
    op: { op: 'renewHold' },
    outcome: { outcome: 'extended' },
    then: { balance: 10_000, held: 1_000, spent: 0, budgetSpent: 0, hold: 'active 1000 until 600200', entries: [] },
  },
  {
    name: 'renewHold: an expired hold is re-admitted as a new hold would be (its next hold entry)',
    given: { balance: 10_000, hold: { amount: 1_000, status: 'expired' } },
    op: { op: 'renewHold' },
    outcome: { outcome: 'readmitted' },
    then: { balance: 10_000, held: 1_000, spent: 0, budgetSpent: 0, hold: 'active 1000 until 600200', entries: ['hold#1 1000'] },
  },
  {
    name: 'renewHold: an expired hold is refused for the balance when it is no longer covered',
    given: { balance: 1_000, otherHeld: 500, hold: { amount: 1_000, status: 'expired' } },
    op: { op: 'renewHold' },
    outcome: { outcome: 'refused', refusal: refused('balance', 500, 500) },
    then: { balance: 1_000, held: 500, spent: 0, budgetSpent: 0, hold: 'expired 1000 until 100', entries: [] },
  },
  {
    name: 'renewHold: an expired hold is refused for the budget when it is no longer covered',
    given: { balance: 10_000, spent: 3_000, hold: { amount: 1_000, status: 'expired' } },
    budget: 3_500,
    op: { op: 'renewHold' },
    outcome: { outcome: 'refused', refusal: refused('budget', 10_000, 3_000) },
    then: { balance: 10_000, held: 0, spent: 3_000, budgetSpent: 3_000, hold: 'expired 1000 until 100', entries: [] },
  },
  {
    name: 'renewHold: an expired hold of a key revoked since is refused as inactive',
    given: { balance: 10_000, key: 'revoked', hold: { amount: 1_000, status: 'expired' } },
    op: { op: 'renewHold' },
    outcome: { outcome: 'refused', refusal: refused('inactive', 10_000, 0, false) },
    then: { balance: 10_000, held: 0, spent: 0, budgetSpent: 0, hold: 'expired 1000 until 100', entries: [] },
  },
  {
    name: 'renewHold: a captured hold is closed',
    given: { balance: 10_000, spent: 1_000, hold: { amount: 1_000, status: 'captured' } },
    op: { op: 'renewHold' },
    outcome: { outcome: 'closed' },
    then: { balance: 10_000, held: 0, spent: 1_000, budgetSpent: 1_000, hold: 'captured 1000 until 600000', entries: [] },
  },
  {
    name: 'renewHold: a released hold is closed',
    given: { balance: 10_000, hold: { amount: 1_000, status: 'released' } },
    op: { op: 'renewHold' },
    outcome: { outcome: 'closed' },
    then: { balance: 10_000, held: 0, spent: 0, budgetSpent: 0, hold: 'released 1000 until 600000', entries: [] },
  },
  {
    name: 'renewHold: no hold is missing',
    given: { balance: 10_000 },
    op: { op: 'renewHold' },
    outcome: { outcome: 'missing' },
    then: { balance: 10_000, held: 0, spent: 0, budgetSpent: 0, period: 'none', hold: null, entries: [] },
  },

  // growHold: request r, by `amount`.
  {
    name: 'growHold: an active hold grows by the step through admission (its next hold entry)',
    given: { balance: 10_000, hold: { amount: 1_000, status: 'active' } },
    op: { op: 'growHold', amount: 500 },
    outcome: { outcome: 'grown' },
    then: { balance: 10_000, held: 1_500, spent: 0, budgetSpent: 0, hold: 'active 1500 until 600000', entries: ['hold#1 500'] },
  },
  {
    name: 'growHold: refused for the balance when the step is not available',
    given: { balance: 1_200, hold: { amount: 1_000, status: 'active' } },
    op: { op: 'growHold', amount: 500 },
    outcome: { outcome: 'refused', refusal: refused('balance', 200, 1_000) },
    then: { balance: 1_200, held: 1_000, spent: 0, budgetSpent: 0, hold: 'active 1000 until 600000', entries: [] },
  },
  {
    name: 'growHold: refused for the budget when spent + held + the step exceed it',
    given: { balance: 10_000, spent: 1_000, hold: { amount: 1_000, status: 'active' } },
    budget: 2_200,
    op: { op: 'growHold', amount: 500 },
    outcome: { outcome: 'refused', refusal: refused('budget', 9_000, 2_000) },
    then: { balance: 10_000, held: 1_000, spent: 1_000, budgetSpent: 1_000, hold: 'active 1000 until 600000', entries: [] },
  },
  {
    name: 'growHold: refused as inactive once the key is revoked',
    given: { balance: 10_000, key: 'revoked', hold: { amount: 1_000, status: 'active' } },
    op: { op: 'growHold', amount: 500 },
    outcome: { outcome: 'refused', refusal: refused('inactive', 9_000, 1_000, false) },
    then: { balance: 10_000, held: 1_000, spent: 0, budgetSpent: 0, hold: 'active 1000 until 600000', entries: [] },
  },
  {
    name: 'growHold: an expired hold is not grown',
    given: { balance: 10_000, hold: { amount: 1_000, status: 'expired' } },
    op: { op: 'growHold', amount: 500 },
    outcome: { outcome: 'expired' },
    then: { balance: 10_000, held: 0, spent: 0, budgetSpent: 0, hold: 'expired 1000 until 100', entries: [] },
  },
  {
    name: 'growHold: a captured hold is closed',
    given: { balance: 10_000, spent: 1_000, hold: { amount: 1_000, status: 'captured' } },
    op: { op: 'growHold', amount: 500 },
    outcome: { outcome: 'closed' },
    then: { balance: 10_000, held: 0, spent: 1_000, budgetSpent: 1_000, hold: 'captured 1000 until 600000', entries: [] },
  },
  {
    name: 'growHold: no hold is missing',
    given: { balance: 10_000 },
    op: { op: 'growHold', amount: 500 },
    outcome: { outcome: 'missing' },
    then: { balance: 10_000, held: 0, spent: 0, budgetSpent: 0, period: 'none', hold: null, entries: [] },
  },

  // expireHolds: at NOW, up to 100 holds.
  {
    name: 'expireHolds: an active hold past its expiry is expired and released; a later one stays',
    given: { balance: 10_000, otherHeld: 500, hold: { amount: 1_000, status: 'active', overdue: true } },
    op: { op: 'expireHolds' },
    outcome: 1,
    then: { balance: 10_000, held: 500, spent: 0, budgetSpent: 0, hold: 'expired 1000 until 100', entries: ['release#0 1000'] },
  },
  {
    name: 'expireHolds: no hold past its expiry: nothing changes',
    given: { balance: 10_000, hold: { amount: 1_000, status: 'active' } },
    op: { op: 'expireHolds' },
    outcome: 0,
    then: { balance: 10_000, held: 1_000, spent: 0, budgetSpent: 0, hold: 'active 1000 until 600000', entries: [] },
  },
];

/** Builds the starting state through the store itself, at T0 (the setup's own budget: none, this period). */
async function arrange(store: TestStore, given: Given): Promise<void> {
  const budget: BudgetWindow = { limit: null, periodStart: PERIOD };
  const hold = given.hold;
  const spent = given.spent ?? 0;
  const earlier = hold?.status === 'captured' ? spent - hold.amount : spent;
  assert.ok(earlier >= 0, 'a captured hold counts in `spent`');
  await store.keys.create(testNewKey('key_a', { initialBalance: given.balance + spent, now: T0 }));
  if (earlier > 0) {
    assert.deepEqual(await store.ledger.placeHold({ requestId: 'earlier', keyId: 'key_a', amount: earlier, expiresAt: T0 + TTL, now: T0, budget }), { admitted: true });
    assert.equal((await store.ledger.settle({ requestId: 'earlier', cost: earlier, usage: testUsage('earlier', earlier, { time: T0 }), now: T0, budget })).outcome, 'captured');
  }
  if (hold) {
    const lapses = hold.status === 'expired' || hold.overdue;
    const expiresAt = lapses ? T0 + 100 : T0 + TTL;
    assert.deepEqual(await store.ledger.placeHold({ requestId: 'r', keyId: 'key_a', amount: hold.amount, expiresAt, now: T0, budget }), { admitted: true });
    if (hold.status === 'expired') assert.equal(await store.ledger.expireHolds(T0 + 100, 100), 1);
    if (hold.status === 'captured') {
      const result = await store.ledger.settle({ requestId: 'r', cost: hold.amount, usage: testUsage('r', hold.amount, { time: T0 }), now: T0, budget });
      assert.equal(result.outcome, 'captured');
    }
    if (hold.status === 'released') assert.equal(await store.ledger.release('r', undefined, T0), 'released');
  }
  if (given.otherHeld) {
    const other = { requestId: 'other', keyId: 'key_a', amount: given.otherHeld, expiresAt: T0 + TTL, now: T0, budget };
    assert.deepEqual(await store.ledger.placeHold(other), { admitted: true });
  }
  if (given.key === 'revoked') await store.keys.revoke('key_a', T0);
  if (given.key === 'expired') await store.keys.setLimits('key_a', { expiresAt: T0 + 150 });
}

/** The request the operation names. */
const subjectOf = (op: Op) => (op.op === 'placeHold' ? (op.requestId ?? 'n') : 'r');

async function apply(store: TestStore, c: Case): Promise<unknown> {
  const budget: BudgetWindow = { limit: c.budget ?? null, periodStart: c.newPeriod ? NEXT_PERIOD : PERIOD };
  const op = c.op;
  switch (op.op) {
    case 'placeHold':
      return store.ledger.placeHold({ requestId: op.requestId ?? 'n', keyId: op.keyId ?? 'key_a', amount: op.amount, expiresAt: NOW + TTL, now: NOW, budget });
    case 'settle':
      return store.ledger.settle({ requestId: 'r', cost: op.cost, usage: testUsage('r', op.usageCost ?? op.cost, { time: NOW }), now: NOW, budget });
    case 'release':
      return store.ledger.release('r', op.usageCost === undefined ? undefined : testUsage('r', op.usageCost, { time: NOW }), NOW);
    case 'renewHold':
      return store.ledger.renewHold({ requestId: 'r', expiresAt: NOW + TTL, now: NOW, budget });
    case 'growHold':
      return store.ledger.growHold({ requestId: 'r', amount: op.amount, now: NOW, budget });
    case 'expireHolds':
      return store.ledger.expireHolds(NOW, 100);
  }
}

interface Snapshot {
  readonly state: Omit<State, 'entries' | 'usage'>;
  readonly lastEntryId: number;
  readonly usage: ReadonlyMap<string, number>;
}

async function snapshot(store: TestStore, subject: string): Promise<Snapshot> {
  const key = (await store.keys.get('key_a'))!;
  const holds = await store.query<{ status: string; amount: number; expires_at: number }>('SELECT status, amount, expires_at FROM holds WHERE request_id = $1', [subject]);
  const last = await store.query<{ id: number | null }>('SELECT MAX(id) AS id FROM ledger_entries');
  const usage = await store.query<{ request_id: string; cost: number }>('SELECT request_id, cost FROM usage_records');
  const period = key.budgetPeriodStart === PERIOD ? undefined : key.budgetPeriodStart === NEXT_PERIOD ? 'next' : key.budgetPeriodStart === 0 ? 'none' : key.budgetPeriodStart;
  const h = holds[0];
  return {
    state: {
      balance: key.balance,
      held: key.held,
      spent: key.spent,
      budgetSpent: key.budgetSpent,
      ...(period === undefined ? {} : { period: period as State['period'] }),
      hold: h ? `${h.status} ${Number(h.amount)} until ${Number(h.expires_at) - T0}` : null,
    },
    lastEntryId: Number(last[0]?.id ?? 0),
    usage: new Map(usage.map((u) => [u.request_id, Number(u.cost)])),
  };
}

/** What the operation changed: the state after, the entries it appended and the usage row it added. */
async function stateAfter(store: TestStore, subject: string, before: Snapshot): Promise<State> {
  const after = await snapshot(store, subject);
  const entries = await store.query<{ request_id: string; kind: string; seq: number; amount: number }>(
    'SELECT request_id, kind, seq, amount FROM ledger_entries WHERE id > $1 ORDER BY id',
    [before.lastEntryId],
  );
  for (const e of entries) assert.equal(e.request_id, subject, 'an operation writes entries of its own request only');
  const added = [...after.usage].filter(([request]) => !before.usage.has(request));
  for (const [request] of added) assert.equal(request, subject, 'an operation writes the usage row of its own request only');
  return {
    ...after.state,
    entries: entries.map((e) => `${e.kind}#${Number(e.seq)} ${Number(e.amount)}`),
    ...(added.length > 0 ? { usage: added[0]![1] } : {}),
  };
}

/** The state `given` describes, as the snapshot reads it (the case's own hold, if the operation names it). */
function describedState(given: Given, subject: string): Omit<State, 'entries' | 'usage'> {
  const hold = given.hold;
  const activeHold = hold?.status === 'active' ? hold.amount : 0;
  const lapses = hold?.status === 'expired' || hold?.overdue;
  const admitted = (given.spent ?? 0) > 0 || hold !== undefined || (given.otherHeld ?? 0) > 0;
  return {
    balance: given.balance,
    held: (given.otherHeld ?? 0) + activeHold,
    spent: given.spent ?? 0,
    budgetSpent: given.spent ?? 0,
    ...(admitted ? {} : { period: 'none' as const }),
    hold: hold && subject === 'r' ? `${hold.status} ${hold.amount} until ${lapses ? 100 : TTL}` : null,
  };
}

for (const dialect of await storeDialects()) {
  describe(`ledger rules on ${dialect.name}`, { skip: dialect.skip }, () => {
    let store: TestStore;
    beforeEach(async () => {
      store = await dialect.open();
    });
    afterEach(async () => {
      await store.close();
    });

    for (const c of CASES) {
      test(c.name, async () => {
        const given = c.given;
        const subject = subjectOf(c.op);
        await arrange(store, given);
        const before = await snapshot(store, subject);
        assert.deepEqual(before.state, describedState(given, subject), 'the starting state is the one described');
        const expected = c.dialects?.[dialect.name] ?? c;
        // An error's form differs between the dialects (a driver's constraint error, the batch's own): only that it threw is the rule.
        const outcome = await apply(store, c).catch(() => 'threw');
        assert.deepEqual(outcome, expected.outcome, 'the outcome');
        assert.deepEqual(await stateAfter(store, subject, before), expected.then, 'the state after');
        const audit = await store.ledger.audit('key_a');
        assert.deepEqual(audit.cached, audit.derived, 'the cached figures still agree with the entries');
      });
    }
  });
}
