// Stripe payments in the store (docs/adr/0050-stripe-top-ups.md), on SQLite and PostgreSQL alike: a paid
// session's row and its credit are written together or not at all, once however often (and however
// concurrently) it is recorded; a refund (cumulative) and a dispute (per dispute id) take money back once
// each, never below the available balance — what the balance cannot cover is recorded as unrecovered —
// and the ledger's invariants hold throughout.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { NewPayment, PaymentReversal } from '../../src/storage/types.js';
import { storeDialects, type TestStore } from '../support/store-dialects.js';

const T0 = 1_800_000_000_000;
const USD = 1_000_000_000;
const CENT = 10_000_000;

function paid(sessionId: string, amount: number, overrides: Partial<NewPayment> = {}): NewPayment {
  return { sessionId, paymentIntent: `pi_${sessionId}`, accountId: 'acct_a', keyId: null, amount, requestId: `stripe:${sessionId}`, note: `Stripe Checkout ${sessionId}`, now: T0, ...overrides };
}

function refund(sessionId: string, cumulative: number, charge = `ch_${sessionId}`): PaymentReversal {
  return { kind: 'refund', paymentIntent: `pi_${sessionId}`, amount: cumulative, id: `refund:${charge}:${cumulative / CENT}`, note: `Stripe refund of checkout ${sessionId}`, now: T0 + 1 };
}

function dispute(sessionId: string, id: string, amount: number): PaymentReversal {
  return { kind: 'dispute', paymentIntent: `pi_${sessionId}`, amount, id: `dispute:${id}`, note: `Stripe dispute ${id} of checkout ${sessionId}`, now: T0 + 2 };
}

for (const dialect of await storeDialects()) {
  describe(`${dialect.name}: Stripe payments`, { skip: dialect.skip }, () => {
    let store: TestStore;
    beforeEach(async () => {
      store = await dialect.open();
      await store.accounts.create({ id: 'acct_a', name: 'a', initialBalance: 0, topupRequestId: 'open-a', now: T0 });
    });
    afterEach(async () => {
      await store.close();
    });

    const balance = async () => (await store.accounts.get('acct_a'))!.balance;
    const entries = (requestId: string) => store.query<{ kind: string; amount: number; note: string }>('SELECT kind, amount, note FROM ledger_entries WHERE request_id = $1', [requestId]);
    const clean = async () => assert.deepEqual(await store.ledger.findViolations({ keyId: undefined, staleBefore: T0 }), []);

    test('a paid session is recorded with its credit once; a second record is a duplicate and changes nothing', async () => {
      assert.equal(await store.payments.recordPaid(paid('cs_1', 25 * USD, { keyId: 'key_x' })), 'applied');
      assert.equal(await store.payments.recordPaid(paid('cs_1', 25 * USD, { keyId: 'key_x' })), 'duplicate');
      assert.equal(await balance(), 25 * USD);
      const rows = await entries('stripe:cs_1');
      assert.equal(rows.length, 1);
      assert.deepEqual([rows[0]!.kind, Number(rows[0]!.amount), rows[0]!.note], ['topup', 25 * USD, 'Stripe Checkout cs_1']);
      const payment = await store.payments.get('cs_1');
      assert.deepEqual(payment, { sessionId: 'cs_1', paymentIntent: 'pi_cs_1', accountId: 'acct_a', keyId: 'key_x', amount: 25 * USD, refunded: 0, disputed: 0, unrecovered: 0, createdAt: T0 });
      assert.deepEqual(await store.payments.byPaymentIntent('pi_cs_1'), payment);
      await clean();
    });

    test('20 concurrent records of one session credit once', async () => {
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => store.payments.recordPaid(paid('cs_race', 10 * USD))));
      assert.equal(outcomes.filter((o) => o === 'applied').length, 1);
      assert.equal(outcomes.filter((o) => o === 'duplicate').length, 19);
      assert.equal(await balance(), 10 * USD);
      assert.equal((await entries('stripe:cs_race')).length, 1);
      await clean();
    });

    test('the payment row and its credit are one transaction: a credit that fails leaves no payment row', async () => {
      // A fault injected into the ledger write of this one session.
      await store.execute(
        dialect.name === 'sqlite'
          ? `CREATE TRIGGER fail_credit BEFORE INSERT ON ledger_entries WHEN NEW.request_id = 'stripe:cs_fail' BEGIN SELECT RAISE(ABORT, 'injected'); END`
          : `CREATE FUNCTION fail_credit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.request_id = 'stripe:cs_fail' THEN RAISE EXCEPTION 'injected'; END IF; RETURN NEW; END $$;
             CREATE TRIGGER fail_credit BEFORE INSERT ON ledger_entries FOR EACH ROW EXECUTE FUNCTION fail_credit()`,
      );
      await assert.rejects(store.payments.recordPaid(paid('cs_fail', 5 * USD)), /injected/);
      assert.equal(await store.payments.get('cs_fail'), undefined, 'no payment row without its credit');
      assert.equal(await balance(), 0);
      assert.equal((await entries('stripe:cs_fail')).length, 0);
      await clean();
    });

    test("a reversal's record, the payment's totals and its adjustment are one transaction", async () => {
      await store.payments.recordPaid(paid('cs_rf', 5 * USD));
      await store.execute(
        dialect.name === 'sqlite'
          ? `CREATE TRIGGER fail_adjust BEFORE INSERT ON ledger_entries WHEN NEW.kind = 'adjust' BEGIN SELECT RAISE(ABORT, 'injected'); END`
          : `CREATE FUNCTION fail_adjust() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.kind = 'adjust' THEN RAISE EXCEPTION 'injected'; END IF; RETURN NEW; END $$;
             CREATE TRIGGER fail_adjust BEFORE INSERT ON ledger_entries FOR EACH ROW EXECUTE FUNCTION fail_adjust()`,
      );
      await assert.rejects(store.payments.reverse(refund('cs_rf', 2 * USD)), /injected/);
      const payment = (await store.payments.get('cs_rf'))!;
      assert.deepEqual([payment.refunded, payment.unrecovered], [0, 0]);
      assert.deepEqual(await store.query('SELECT id FROM stripe_reversals'), []);
      assert.equal(await balance(), 5 * USD);
      await clean();
    });

    test('payment.succeeded and payment.refunded are written with their money, once each, and not with a failed one', async () => {
      const events = async () => (await store.webhooks.page({ limit: 50 })).map((e) => ({ type: e.type, data: e.data })).reverse();
      await Promise.all(Array.from({ length: 5 }, () => store.payments.recordPaid(paid('cs_ev', 8 * USD, { keyId: 'key_x' }))));
      await Promise.all(Array.from({ length: 3 }, () => store.payments.reverse(refund('cs_ev', 3 * USD))));
      await store.payments.reverse(dispute('cs_ev', 'dp_1', 20 * USD));
      assert.equal(await store.payments.recordPaid(paid('cs_nobody', USD, { accountId: 'acct_nobody' })), 'missing');
      const common = { account_id: 'acct_a', provider: 'stripe', session_id: 'cs_ev', payment_intent: 'pi_cs_ev' };
      assert.deepEqual(await events(), [
        { type: 'payment.succeeded', data: { ...common, key_id: 'key_x', amount_usd: 8 } },
        { type: 'payment.refunded', data: { ...common, kind: 'refund', reversal_id: 'refund:ch_cs_ev:300', amount_usd: 3, debited_usd: 3, unrecovered_usd: 0 } },
        // The dispute asks for 20 of a payment of 8 with 5 left: what the payment allows, what the balance gives.
        { type: 'payment.refunded', data: { ...common, kind: 'dispute', reversal_id: 'dispute:dp_1', amount_usd: 5, debited_usd: 5, unrecovered_usd: 0 } },
      ]);
      await clean();
    });

    test('an unknown account, or a credit past the maximum, records nothing at all', async () => {
      assert.equal(await store.payments.recordPaid(paid('cs_nobody', USD, { accountId: 'acct_nobody' })), 'missing');
      assert.equal(await store.payments.get('cs_nobody'), undefined);
      assert.equal(await store.payments.recordPaid(paid('cs_huge', 9_000_000 * USD)), 'over_maximum');
      assert.equal(await store.payments.get('cs_huge'), undefined);
      assert.equal((await entries('stripe:cs_huge')).length, 0);
      assert.equal(await balance(), 0);
    });

    test('a partial then a full refund take back the newly refunded amount once each; replays and an older cumulative change nothing', async () => {
      await store.payments.recordPaid(paid('cs_r', 20 * USD));
      const partial = await store.payments.reverse(refund('cs_r', 5 * USD));
      assert.equal(partial.outcome, 'applied');
      assert.ok(partial.outcome === 'applied' && partial.taken === 5 * USD && partial.debited === 5 * USD);
      assert.equal((await store.payments.reverse(refund('cs_r', 5 * USD))).outcome, 'duplicate');
      assert.equal(await balance(), 15 * USD);
      const full = await store.payments.reverse(refund('cs_r', 20 * USD));
      assert.ok(full.outcome === 'applied' && full.taken === 15 * USD);
      assert.equal((await store.payments.reverse(refund('cs_r', 20 * USD))).outcome, 'duplicate');
      assert.equal((await store.payments.reverse(refund('cs_r', 5 * USD))).outcome, 'duplicate', 'an older event delivered late');
      assert.equal(await balance(), 0);
      const adjust = await entries('stripe:refund:ch_cs_r:500');
      assert.deepEqual([adjust[0]!.kind, Number(adjust[0]!.amount), adjust[0]!.note], ['adjust', -5 * USD, 'Stripe refund of checkout cs_r']);
      assert.equal((await store.payments.get('cs_r'))!.refunded, 20 * USD);
      await clean();
    });

    test('a dispute takes its amount back once per dispute id', async () => {
      await store.payments.recordPaid(paid('cs_d', 30 * USD));
      const first = await store.payments.reverse(dispute('cs_d', 'dp_1', 30 * USD));
      assert.ok(first.outcome === 'applied' && first.debited === 30 * USD);
      assert.equal((await store.payments.reverse(dispute('cs_d', 'dp_1', 30 * USD))).outcome, 'duplicate');
      assert.equal(await balance(), 0);
      assert.equal((await store.payments.get('cs_d'))!.disputed, 30 * USD);
      await clean();
    });

    test('concurrent deliveries of one refund and one dispute take back once', async () => {
      await store.payments.recordPaid(paid('cs_c', 40 * USD));
      const results = await Promise.all([
        ...Array.from({ length: 10 }, () => store.payments.reverse(refund('cs_c', 10 * USD))),
        ...Array.from({ length: 10 }, () => store.payments.reverse(dispute('cs_c', 'dp_c', 5 * USD))),
      ]);
      assert.equal(results.filter((r) => r.outcome === 'applied').length, 2);
      assert.equal(await balance(), 25 * USD);
      await clean();
    });

    test('a reversal past the available balance debits what is available and records the rest as unrecovered, never overdrawing', async () => {
      await store.payments.recordPaid(paid('cs_spent', 10 * USD));
      // Spend 7 of it: an operator's adjustment stands in for usage here.
      assert.equal(await store.accounts.credit({ accountId: 'acct_a', kind: 'adjust', amount: -7 * USD, requestId: 'spend', note: 'spent', now: T0 }), 'applied');
      const result = await store.payments.reverse(refund('cs_spent', 10 * USD));
      assert.ok(result.outcome === 'applied' && result.taken === 10 * USD && result.debited === 3 * USD, JSON.stringify(result));
      assert.equal(await balance(), 0);
      const payment = (await store.payments.get('cs_spent'))!;
      assert.deepEqual([payment.refunded, payment.unrecovered], [10 * USD, 7 * USD]);
      // A dispute of the already refunded payment takes nothing more (recorded once, with nothing to take).
      const late = await store.payments.reverse(dispute('cs_spent', 'dp_late', 10 * USD));
      assert.ok(late.outcome === 'applied' && late.taken === 0 && late.debited === 0);
      assert.equal(await balance(), 0);
      await clean();
    });

    test('a reversal of an unknown payment changes nothing', async () => {
      assert.deepEqual(await store.payments.reverse(refund('cs_none', USD)), { outcome: 'unknown_payment' });
      assert.equal(await balance(), 0);
    });

    test('payments list newest first, a page at a time, optionally one account’s', async () => {
      await store.accounts.create({ id: 'acct_b', name: 'b', initialBalance: 0, topupRequestId: 'open-b', now: T0 });
      for (let i = 0; i < 5; i++) await store.payments.recordPaid(paid(`cs_${i}`, USD, { now: T0 + i, accountId: i % 2 === 0 ? 'acct_a' : 'acct_b' }));
      const first = await store.payments.page({ limit: 2 });
      assert.deepEqual(first.map((p) => p.sessionId), ['cs_4', 'cs_3']);
      const next = await store.payments.page({ limit: 10, before: { createdAt: first[1]!.createdAt, sessionId: first[1]!.sessionId } });
      assert.deepEqual(next.map((p) => p.sessionId), ['cs_2', 'cs_1', 'cs_0']);
      assert.deepEqual((await store.payments.page({ limit: 10, accountId: 'acct_b' })).map((p) => p.sessionId), ['cs_3', 'cs_1']);
    });
  });
}
