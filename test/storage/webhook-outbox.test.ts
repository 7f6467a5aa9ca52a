// The webhook outbox on SQLite and PostgreSQL alike (docs/adr/0052-signed-webhooks.md): an event is
// written in the transaction of its change (a revoke, a credit carrying a payment event) and rolls back
// with it; two deliverers never lease one event; a lapsed lease is taken over and the old owner's result
// is ignored; the notification scan writes one balance.low per crossing (re-armed above the threshold),
// one budget.reached per period, and key.expiring 7 days and 1 day ahead once each — and two scans at
// once write each of those once.
import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { periodStart } from '../../src/billing/budget-period.js';
import type { Credit, NotificationScan, UsageRecord, WebhookEventRecord } from '../../src/storage/types.js';
import { testNewKey } from '../support/key-fixture.js';
import { storeDialects, type TestStore } from '../support/store-dialects.js';

const T0 = 1_750_000_000_000;
const DAY = 86_400_000;
const USD = 1_000_000_000;

function scanAt(now: number, overrides: Partial<NotificationScan> = {}): NotificationScan {
  return { now, balanceLow: 5 * USD, keyBudget: null, keyBudgetPeriod: 'month', ...overrides };
}

async function events(store: TestStore, type?: string): Promise<WebhookEventRecord[]> {
  const all = await store.webhooks.page({ limit: 1000 });
  return all.filter((e) => type === undefined || e.type === type).reverse();
}

function usageOf(requestId: string, keyId: string, cost: number, time: number): UsageRecord {
  return {
    requestId, time, keyId, model: 'm', provider: 'p', upstreamModel: 'm', status: 200, inputTokens: 1, cachedInputTokens: 0,
    outputTokens: 1, reasoningTokens: 0, cost, usageSource: 'upstream', attempts: [], endpoint: 'chat', errorCode: null,
    errorMessage: null, durationMs: 1, firstTokenMs: null, sessionId: null,
  };
}

let nextRequest = 0;
const credit = (accountId: string, amount: number, overrides: Partial<Credit> = {}): Credit => ({
  accountId, kind: amount >= 0 ? 'topup' : 'adjust', amount, requestId: `c-${++nextRequest}`, note: amount >= 0 ? null : 'spend', now: T0, ...overrides,
});

for (const dialect of await storeDialects()) {
  describe(`${dialect.name}: webhook outbox`, { skip: dialect.skip }, () => {
    let store: TestStore;
    beforeEach(async () => {
      store = await dialect.open();
      await store.accounts.create({ id: 'acct_a', name: 'A', initialBalance: 20 * USD, topupRequestId: 'open-a', now: T0 });
      await store.keys.create(testNewKey('key_a', { accountId: 'acct_a', now: T0 }));
    });
    afterEach(async () => {
      await store.close();
    });

    test('a revoke writes key.revoked in its transaction, once: a second revoke writes nothing', async () => {
      await store.keys.revoke('key_a', T0 + 5);
      await store.keys.revoke('key_a', T0 + 6);
      await store.keys.revoke('key_missing', T0 + 6);
      const revoked = await events(store, 'key.revoked');
      assert.equal(revoked.length, 1);
      assert.deepEqual(revoked[0]!.data, { key_id: 'key_a', account_id: 'acct_a', key_name: 'key_a', revoked_at: new Date(T0 + 5).toISOString() });
      assert.equal(revoked[0]!.status, 'pending');
      assert.match(revoked[0]!.messageId, /^msg_[0-9a-f]{32}$/);
    });

    test('a credit carrying a payment event writes it with the money, once; a duplicate or a refused credit writes none', async () => {
      const paid = credit('acct_a', 10 * USD, { requestId: 'cs_test_1', event: { type: 'payment.succeeded', data: { session: 'cs_test_1', amount_usd: 10 } } });
      assert.equal(await store.accounts.credit(paid), 'applied');
      assert.equal(await store.accounts.credit(paid), 'duplicate');
      const refund = credit('acct_a', -1_000 * USD, { event: { type: 'payment.refunded', data: { charge: 'ch_1' } } });
      assert.equal(await store.accounts.credit(refund), 'overdraw');
      assert.equal(await store.accounts.credit(credit('acct_missing', USD, { event: { type: 'payment.succeeded', data: {} } })), 'missing');
      const all = await events(store);
      assert.deepEqual(all.map((e) => [e.type, e.data]), [['payment.succeeded', { session: 'cs_test_1', amount_usd: 10, account_id: 'acct_a' }]]);
    });

    test('an event that cannot be written rolls its credit back: no money, no entry, no event', async () => {
      const before = (await store.accounts.get('acct_a'))!.balance;
      // A BigInt is no JSON: the event's write throws after the ledger entry's, inside the transaction.
      const broken = credit('acct_a', 3 * USD, { requestId: 'cs_broken', event: { type: 'payment.succeeded', data: { n: 1n } } });
      await assert.rejects(store.accounts.credit(broken));
      assert.equal((await store.accounts.get('acct_a'))!.balance, before);
      assert.equal((await store.query('SELECT 1 FROM ledger_entries WHERE request_id = $1', ['cs_broken'])).length, 0);
      assert.equal((await events(store)).length, 0);
      // The same credit without the bad data applies afterwards (its request id was never used).
      assert.equal(await store.accounts.credit({ ...broken, event: { type: 'payment.succeeded', data: { n: 1 } } }), 'applied');
    });

    test('two deliverers claiming at once never take the same event; a leased event waits for its lease to lapse', async () => {
      for (let i = 0; i < 9; i++) await store.webhooks.enqueue({ type: 'upstream.recovered', data: { i } }, T0);
      const [a, b] = await Promise.all([
        store.webhooks.claim({ owner: 'a', now: T0 + 1, leaseMs: 10_000, limit: 6 }),
        store.webhooks.claim({ owner: 'b', now: T0 + 1, leaseMs: 10_000, limit: 6 }),
      ]);
      const ids = [...a, ...b].map((e) => e.id);
      assert.equal(ids.length, 9);
      assert.equal(new Set(ids).size, 9);
      assert.equal((await store.webhooks.claim({ owner: 'c', now: T0 + 2, leaseMs: 10_000, limit: 100 })).length, 0);
      // The lease lapses (its owner died): another deliverer takes the event, and the old owner's result counts for nothing.
      const taken = await store.webhooks.claim({ owner: 'c', now: T0 + 10_002, leaseMs: 10_000, limit: 100 });
      assert.equal(taken.length, 9);
      assert.equal(await store.webhooks.complete(a[0]!.id, 'a', { outcome: 'delivered', deliveredTo: ['http://x'] }, T0 + 10_003), false);
      assert.equal(await store.webhooks.complete(a[0]!.id, 'c', { outcome: 'delivered', deliveredTo: ['http://x'] }, T0 + 10_003), true);
      const done = (await store.webhooks.get(a[0]!.id))!;
      assert.equal(done.status, 'delivered');
      assert.equal(done.attempts, 1);
      assert.equal(done.deliveredAt, T0 + 10_003);
    });

    test('a failed round is retried at its time with the same message id; failed for good and resent', async () => {
      await store.webhooks.enqueue({ type: 'key.revoked', data: {} }, T0);
      const [event] = await store.webhooks.claim({ owner: 'a', now: T0, leaseMs: 1_000, limit: 1 });
      assert.ok(await store.webhooks.complete(event!.id, 'a', { outcome: 'retry', deliveredTo: ['http://ok'], error: 'http://bad: HTTP 500', nextAttemptAt: T0 + 5_000 }, T0 + 10));
      assert.equal((await store.webhooks.claim({ owner: 'a', now: T0 + 4_999, leaseMs: 1_000, limit: 1 })).length, 0);
      const [again] = await store.webhooks.claim({ owner: 'b', now: T0 + 5_000, leaseMs: 1_000, limit: 1 });
      assert.equal(again!.messageId, event!.messageId);
      assert.deepEqual(again!.deliveredTo, ['http://ok']);
      assert.equal(again!.lastError, 'http://bad: HTTP 500');
      assert.equal(again!.attempts, 1);
      assert.ok(await store.webhooks.complete(again!.id, 'b', { outcome: 'failed', deliveredTo: ['http://ok'], error: 'gave up' }, T0 + 5_010));
      assert.equal((await store.webhooks.get(event!.id))!.status, 'failed');
      assert.equal((await store.webhooks.page({ status: 'failed', limit: 10 })).length, 1);
      assert.equal(await store.webhooks.pendingCount(), 0);
      const resent = (await store.webhooks.resend(event!.id, T0 + 9_000))!;
      assert.equal(resent.status, 'pending');
      assert.deepEqual(resent.deliveredTo, []);
      assert.equal(resent.retryFrom, T0 + 9_000);
      assert.equal(resent.messageId, event!.messageId);
      assert.equal(await store.webhooks.pendingCount(), 1);
      assert.equal(await store.webhooks.resend(999_999, T0), undefined);
    });

    test('retention: settled events older than the keeping time are deleted in batches, a pending one never', async () => {
      // Five events at T0: one stays pending, the others are settled as delivered, skipped and failed.
      for (let i = 0; i < 5; i++) await store.webhooks.enqueue({ type: 'key.revoked', data: { n: i } }, T0);
      const claimed = await store.webhooks.claim({ owner: 'a', now: T0, leaseMs: 1_000, limit: 4 });
      const results = [
        { outcome: 'delivered', deliveredTo: ['http://x'] },
        { outcome: 'skipped', deliveredTo: [] },
        { outcome: 'failed', deliveredTo: [], error: 'gave up' },
        { outcome: 'delivered', deliveredTo: ['http://x'] },
      ] as const;
      for (const [i, event] of claimed.entries()) assert.ok(await store.webhooks.complete(event.id, 'a', results[i]!, T0 + 1));
      await store.webhooks.enqueue({ type: 'key.revoked', data: { n: 'recent' } }, T0 + DAY);
      assert.equal(await store.webhooks.prune(T0, 100), 0, 'nothing was created before T0');
      assert.equal(await store.webhooks.prune(T0 + 1, 3), 3, 'a batch at most');
      assert.equal(await store.webhooks.prune(T0 + 1, 3), 1);
      assert.equal(await store.webhooks.prune(T0 + 1, 3), 0);
      const left = await store.webhooks.page({ limit: 10 });
      assert.deepEqual(left.map((e) => [e.status, e.data.n]).sort(), [['pending', 'recent'], ['pending', 4]].sort());
    });

    test('a dedupe key writes its event once', async () => {
      assert.equal(await store.webhooks.enqueue({ type: 'upstream.cooling', data: {}, dedupeKey: 'k1' }, T0), true);
      assert.equal(await store.webhooks.enqueue({ type: 'upstream.cooling', data: {}, dedupeKey: 'k1' }, T0), false);
      assert.equal((await events(store)).length, 1);
    });

    test('listing: newest first, by type and status, with a cursor', async () => {
      for (let i = 0; i < 5; i++) await store.webhooks.enqueue({ type: i % 2 ? 'key.revoked' : 'balance.low', data: { i } }, T0 + i);
      const first = await store.webhooks.page({ limit: 2 });
      assert.deepEqual(first.map((e) => e.data.i), [4, 3]);
      const next = await store.webhooks.page({ limit: 10, beforeId: first[1]!.id });
      assert.deepEqual(next.map((e) => e.data.i), [2, 1, 0]);
      assert.deepEqual((await store.webhooks.page({ type: 'key.revoked', limit: 10 })).map((e) => e.data.i), [3, 1]);
      assert.equal((await store.webhooks.page({ status: 'delivered', limit: 10 })).length, 0);
    });

    test('balance.low: one event per crossing, re-armed when the balance rises above the threshold', async () => {
      assert.equal(await store.webhooks.scan(scanAt(T0)), 0); // 20 USD ≥ 5
      assert.equal(await store.accounts.credit(credit('acct_a', -16 * USD)), 'applied'); // 4 USD left
      assert.equal(await store.webhooks.scan(scanAt(T0 + 1)), 1);
      assert.equal(await store.webhooks.scan(scanAt(T0 + 2)), 0);
      assert.equal(await store.accounts.credit(credit('acct_a', -1 * USD)), 'applied'); // still below: no second
      assert.equal(await store.webhooks.scan(scanAt(T0 + 3)), 0);
      assert.equal(await store.accounts.credit(credit('acct_a', 10 * USD)), 'applied'); // 13 USD: re-armed
      assert.equal(await store.webhooks.scan(scanAt(T0 + 4)), 0);
      assert.equal(await store.accounts.credit(credit('acct_a', -12 * USD)), 'applied'); // 1 USD
      assert.equal(await store.webhooks.scan(scanAt(T0 + 5)), 1);
      const low = await events(store, 'balance.low');
      assert.deepEqual(low.map((e) => e.data), [
        { account_id: 'acct_a', account_name: 'A', available_usd: 4, threshold_usd: 5 },
        { account_id: 'acct_a', account_name: 'A', available_usd: 1, threshold_usd: 5 },
      ]);
    });

    test("balance.low: an account's metadata sets its own threshold, or turns it off", async () => {
      await store.accounts.create({ id: 'acct_b', name: 'B', initialBalance: 8 * USD, topupRequestId: 'open-b', now: T0, metadata: { balance_low_usd: '10' } });
      await store.accounts.create({ id: 'acct_c', name: 'C', initialBalance: 1 * USD, topupRequestId: 'open-c', now: T0, metadata: { balance_low_usd: 'off' } });
      assert.equal(await store.webhooks.scan(scanAt(T0)), 1);
      assert.deepEqual((await events(store, 'balance.low')).map((e) => e.data.account_id), ['acct_b']);
      assert.equal(await store.webhooks.scan(scanAt(T0, { balanceLow: null })), 0);
    });

    test('two scans at once write one balance.low for one crossing', async () => {
      await store.accounts.credit(credit('acct_a', -19 * USD));
      const written = await Promise.all([store.webhooks.scan(scanAt(T0 + 1)), store.webhooks.scan(scanAt(T0 + 1)), store.webhooks.scan(scanAt(T0 + 1))]);
      assert.equal(written.reduce((a, b) => a + b, 0), 1);
      assert.equal((await events(store, 'balance.low')).length, 1);
    });

    test('key.expiring: 7 days and 1 day ahead, once each; a key extended past 7 days is re-armed', async () => {
      const expiresAt = T0 + 10 * DAY;
      await store.keys.create(testNewKey('key_exp', { accountId: 'acct_a', now: T0, expiresAt }));
      assert.equal(await store.webhooks.scan(scanAt(T0, { balanceLow: null })), 0);
      assert.equal(await store.webhooks.scan(scanAt(T0 + 3 * DAY + 1, { balanceLow: null })), 1);
      assert.equal(await store.webhooks.scan(scanAt(T0 + 4 * DAY, { balanceLow: null })), 0);
      assert.equal(await store.webhooks.scan(scanAt(T0 + 9 * DAY + 1, { balanceLow: null })), 1);
      assert.equal(await store.webhooks.scan(scanAt(T0 + 9 * DAY + 2, { balanceLow: null })), 0);
      assert.equal(await store.webhooks.scan(scanAt(expiresAt + 1, { balanceLow: null })), 0);
      assert.deepEqual((await events(store, 'key.expiring')).map((e) => [e.data.key_id, e.data.days_ahead, e.data.expires_at]), [
        ['key_exp', 7, new Date(expiresAt).toISOString()],
        ['key_exp', 1, new Date(expiresAt).toISOString()],
      ]);
      // Extended by 30 days: re-armed, and announced again 7 days before the new expiry.
      await store.keys.setLimits('key_exp', { expiresAt: expiresAt + 30 * DAY });
      assert.equal(await store.webhooks.scan(scanAt(T0 + 9 * DAY + 3, { balanceLow: null })), 0);
      assert.equal(await store.webhooks.scan(scanAt(expiresAt + 24 * DAY, { balanceLow: null })), 1);
      // A key made less than a day before its expiry gets the 1-day notice only.
      await store.keys.create(testNewKey('key_short', { accountId: 'acct_a', now: T0, expiresAt: T0 + DAY / 2 }));
      assert.equal(await store.webhooks.scan(scanAt(T0, { balanceLow: null })), 1);
      assert.deepEqual((await events(store, 'key.expiring')).at(-1)!.data.days_ahead, 1);
    });

    test("budget.reached: a key's budget spent writes one event per period", async () => {
      await store.keys.setLimits('key_a', { budget: 2 * USD, budgetPeriod: 'day' });
      const start = periodStart(T0, 'day');
      const window = { limit: 2 * USD, periodStart: start };
      for (const [i, cost] of [[1, USD], [2, USD]] as const) {
        const requestId = `spend-${i}`;
        assert.equal((await store.ledger.placeHold({ requestId, keyId: 'key_a', amount: cost, now: T0 + i, expiresAt: T0 + 600_000, budget: window })).admitted, true);
        await store.ledger.settle({ requestId, cost, usage: usageOf(requestId, 'key_a', cost, T0 + i), now: T0 + i, budget: window });
        assert.equal(await store.webhooks.scan(scanAt(T0 + 10 + i, { balanceLow: null })), i === 1 ? 0 : 1);
      }
      assert.equal(await store.webhooks.scan(scanAt(T0 + 20, { balanceLow: null })), 0);
      // The next day the spend counts from zero: nothing until it is spent again.
      assert.equal(await store.webhooks.scan(scanAt(start + DAY + 1, { balanceLow: null })), 0);
      const reached = await events(store, 'budget.reached');
      assert.equal(reached.length, 1);
      assert.deepEqual(reached[0]!.data, {
        scope: 'key', account_id: 'acct_a', key_id: 'key_a', key_name: 'key_a', budget_usd: 2, spent_usd: 2, period: 'day', period_start: new Date(start).toISOString(),
      });
    });

    test("budget.reached: an account's budget spent by its keys writes one event, scope account", async () => {
      await store.accounts.update('acct_a', { budget: 1 * USD, budgetPeriod: 'week' });
      const start = periodStart(T0, 'week');
      const none = { limit: null, periodStart: periodStart(T0, 'month') };
      const accountBudget = { limit: 1 * USD, periodStart: start };
      assert.equal((await store.ledger.placeHold({ requestId: 'acct-spend', keyId: 'key_a', amount: USD, now: T0, expiresAt: T0 + 600_000, budget: none, accountBudget })).admitted, true);
      await store.ledger.settle({ requestId: 'acct-spend', cost: USD, usage: usageOf('acct-spend', 'key_a', USD, T0), now: T0 + 1, budget: none, accountBudget });
      assert.equal(await store.webhooks.scan(scanAt(T0 + 2, { balanceLow: null })), 1);
      assert.equal(await store.webhooks.scan(scanAt(T0 + 3, { balanceLow: null })), 0);
      assert.deepEqual((await events(store, 'budget.reached'))[0]!.data, {
        scope: 'account', account_id: 'acct_a', account_name: 'A', budget_usd: 1, spent_usd: 1, period: 'week', period_start: new Date(start).toISOString(),
      });
    });
  });
}
