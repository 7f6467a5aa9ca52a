// Stripe Checkout top-ups end to end (docs/adr/0050-stripe-top-ups.md): a real gateway process whose real
// `stripe` SDK talks to a local fake of the Stripe API (test/support/fake-stripe.ts), and webhook
// deliveries signed with the SDK's own test-header helper. Checkout for an account token and for a key;
// bad amounts refused before any Stripe call; a paid session credits exactly once however often (10
// sequential, 20 concurrent deliveries) and through either event; a bad signature is 400 and changes
// nothing; an unpaid session, an unknown account and a non-USD session change nothing (200: a retry cannot
// change them); refunds (partial, then full) and a dispute take back once each; the ledger audits clean;
// a database failure is 503 (Stripe retries) and the retry credits once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN, adminConfigYaml, adminDialects, adminOk, assertError, walkList } from '../support/admin.js';
import { call, parseJsonOutput, waitFor, type Json } from '../support/e2e.js';
import { checkoutSession, signatureOf, startFakeStripe, stripeConfigYaml, stripeEnv, stripeEvent, type FakeStripe } from '../support/fake-stripe.js';
import { mockConfig, startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { startPgFaultProxy, type PgFaultProxy } from '../support/pg-fault-proxy.js';
import { freshPgSchema, type PgSchema } from '../support/postgres.js';

const USD = 1_000_000_000;
const nano = (usd: number): number => Math.round(usd * 1e9);

/** POST /webhooks/stripe with `payload`, signed with the gateway's secret unless `signature` is given. */
function deliver(gw: GatewayProcess, payload: string, signature: string | null = signatureOf(payload)) {
  return call(gw, 'POST', '//webhooks/stripe', { body: payload, headers: { 'content-type': 'application/json; charset=utf-8', ...(signature === null ? {} : { 'stripe-signature': signature }) } });
}

for (const dialect of await adminDialects()) {
  describe(`Stripe top-ups (${dialect.name})`, { skip: dialect.skip }, () => {
    let mock: MockUpstream;
    let fake: FakeStripe;
    let schema: PgSchema | undefined;
    let gw: GatewayProcess;
    let account: { id: string; token: string };
    let key: { id: string; key: string };
    let sessionSeq = 0;

    before(async () => {
      mock = await startMockUpstream();
      fake = await startFakeStripe();
      schema = dialect.name === 'postgres' ? await freshPgSchema() : undefined;
      gw = await startGateway({
        config: mockConfig(mock, adminConfigYaml + stripeConfigYaml(fake)),
        env: { TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN, ...stripeEnv },
        ...(schema ? { database: schema.url } : {}),
      });
      const created = await adminOk(gw, 'POST', '/accounts', { body: { name: 'team' } });
      const token = await adminOk(gw, 'POST', `/accounts/${created.id}/token`);
      account = { id: created.id, token: token.token };
      const issued = parseJsonOutput(await gw.cli(['keys', 'create', '--name', 'dev', '--account', account.id, '--json']), 'keys create');
      key = { id: issued.id, key: issued.key };
    });
    after(async () => {
      await stopGateway(gw, 10_000);
      await mock?.close();
      await fake?.close();
      await schema?.drop();
    });

    const balanceOf = async (id = account.id): Promise<number> => nano((await adminOk(gw, 'GET', `/accounts/${id}`)).balance);
    const entriesOf = async (requestId: string): Promise<Json[]> => (await walkList(gw, `/accounts/${account.id}/ledger`, 500)).filter((e) => e.request_id === requestId);
    const auditClean = async () => {
      const audit = await adminOk(gw, 'GET', '/audit');
      assert.deepEqual([audit.ok, audit.violations], [true, []]);
    };
    const newSession = () => `cs_test_e2e_${dialect.name}_${++sessionSeq}`;
    /** The outbox's events of `type` for one session (ADR 0052: written in the money's transaction). */
    const eventsOf = async (type: string, sessionId: string): Promise<Json[]> =>
      (await walkList(gw, `/webhooks/events?type=${type}`, 500)).filter((e) => e.data.session_id === sessionId);
    const paidEvent = (sessionId: string, cents: number, overrides: Record<string, unknown> = {}, type = 'checkout.session.completed') =>
      stripeEvent(type, checkoutSession({ id: sessionId, amount_total: cents, client_reference_id: account.id, metadata: { tollgate_account_id: account.id }, payment_intent: `pi_${sessionId}`, ...overrides }));

    test('GET /v1/account/checkout says payments are on, with the bounds, to an account token and to a key', async () => {
      for (const credential of [account.token, key.key]) {
        const res = await call(gw, 'GET', '/account/checkout', { key: credential });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.json, { object: 'checkout_options', currency: 'usd', enabled: true, min_amount: 5, max_amount: 500 });
      }
    });

    test('checkout for an account token: one Checkout Session through the SDK, naming the account', async () => {
      const calls = fake.requests.length;
      const res = await call(gw, 'POST', '/account/checkout', { key: account.token, body: { amount: 25 } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.object, 'checkout_session');
      assert.match(res.json.id, /^cs_test_/);
      assert.equal(res.json.url, `https://checkout.stripe.com/c/pay/${res.json.id}`);
      assert.deepEqual([res.json.amount, res.json.currency, res.json.account_id], [25, 'usd', account.id]);
      assert.equal(fake.requests.length, calls + 1);
      const sent = fake.requests.at(-1)!;
      assert.equal(sent.path, '/v1/checkout/sessions');
      assert.equal(sent.headers.authorization, `Bearer ${stripeEnv.STRIPE_SECRET_KEY}`);
      assert.match(String(sent.headers['idempotency-key']), /^tollgate-checkout-/);
      assert.equal(sent.form.mode, 'payment');
      assert.equal(sent.form['line_items[0][price_data][unit_amount]'], '2500');
      assert.equal(sent.form['line_items[0][price_data][currency]'], 'usd');
      assert.equal(sent.form['line_items[0][quantity]'], '1');
      assert.equal(sent.form.client_reference_id, account.id);
      assert.equal(sent.form['metadata[tollgate_account_id]'], account.id);
      assert.equal(sent.form['metadata[tollgate_key_id]'], undefined);
      assert.equal(sent.form.success_url, 'https://example.com/paid?session={CHECKOUT_SESSION_ID}');
      assert.equal(await balanceOf(), 0, 'a checkout credits nothing until Stripe says it is paid');
    });

    test('checkout for a key: the key stands for its account, and the session names the key too', async () => {
      const res = await call(gw, 'POST', '/account/checkout', { key: key.key, body: { amount: '12.50' } });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual([res.json.amount, res.json.account_id], [12.5, account.id]);
      const sent = fake.requests.at(-1)!;
      assert.equal(sent.form['line_items[0][price_data][unit_amount]'], '1250');
      assert.equal(sent.form.client_reference_id, account.id);
      assert.equal(sent.form['metadata[tollgate_key_id]'], key.id);
    });

    test('an Idempotency-Key makes one session: the retry is answered from the first, Stripe is called once', async () => {
      const calls = fake.requests.length;
      const headers = { 'idempotency-key': `checkout-${dialect.name}-1` };
      const first = await call(gw, 'POST', '/account/checkout', { key: account.token, body: { amount: 40 }, headers });
      const again = await call(gw, 'POST', '/account/checkout', { key: account.token, body: { amount: 40 }, headers });
      assert.equal(first.status, 200, first.text);
      assert.deepEqual(again.json, first.json);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(fake.requests.length, calls + 1);
      // Stripe gets the request's stable operation id: a retry after a lost answer makes no second session there either.
      assert.match(String(fake.requests.at(-1)!.headers['idempotency-key']), /^tollgate-checkout-idem_[0-9a-f]{40}$/);
    });

    test('an amount out of range, not whole cents, or not an amount is 400 and Stripe is never called', async () => {
      const calls = fake.requests.length;
      for (const amount of [4.99, 500.01, 1000, 0, -10, '10.001', 'ten', null, true]) {
        const res = await call(gw, 'POST', '/account/checkout', { key: account.token, body: { amount } });
        const error = assertError(res, 400, 'invalid_request');
        assert.equal(error.param, 'amount', res.text);
      }
      assertError(await call(gw, 'POST', '/account/checkout', { key: account.token, body: {} }), 400, 'invalid_request');
      assertError(await call(gw, 'POST', '/account/checkout', { key: account.token, body: { amount: 10, balance: 5 } }), 400, 'invalid_request');
      assert.match((await call(gw, 'POST', '/account/checkout', { key: account.token, body: { amount: 4.99 } })).json.error.message, /from 5 to 500 USD/);
      assertError(await call(gw, 'POST', '/account/checkout', { body: { amount: 10 } }), 401, 'invalid_account_token');
      assert.equal(fake.requests.length, calls, 'no Stripe call for bad input');
    });

    test('a suspended account may still buy credit, and stays suspended (ADR 0050)', async () => {
      await adminOk(gw, 'POST', `/accounts/${account.id}/suspend`);
      try {
        const res = await call(gw, 'POST', '/account/checkout', { key: key.key, body: { amount: 5 } });
        assert.equal(res.status, 200, res.text);
        assert.equal((await adminOk(gw, 'GET', `/accounts/${account.id}`)).status, 'suspended');
      } finally {
        await adminOk(gw, 'POST', `/accounts/${account.id}/resume`);
      }
    });

    test('Stripe refusing the session is 502 payment_provider_error', async () => {
      fake.failNext(400);
      assertError(await call(gw, 'POST', '/account/checkout', { key: account.token, body: { amount: 10 } }), 502, 'payment_provider_error');
    });

    test('a paid session credits once: 10 sequential and 20 concurrent deliveries, and the async-payment event, make one credit', async () => {
      const before = await balanceOf();
      const sessionId = newSession();
      const payload = paidEvent(sessionId, 2_500);
      const first = await deliver(gw, payload);
      assert.equal(first.status, 200, first.text);
      assert.equal(first.json.outcome, 'credited');
      assert.equal(await balanceOf(), before + 25 * USD);

      const sequential: string[] = [];
      for (let i = 0; i < 10; i++) {
        const res = await deliver(gw, payload);
        assert.equal(res.status, 200, res.text);
        sequential.push(res.json.outcome);
      }
      assert.deepEqual(sequential, Array(10).fill('duplicate'));

      // 20 concurrent deliveries of a new session: exactly one credits.
      const raced = newSession();
      const racedPayload = paidEvent(raced, 10_000);
      const answers = await Promise.all(Array.from({ length: 20 }, () => deliver(gw, racedPayload)));
      assert.deepEqual(answers.map((a) => a.status), Array(20).fill(200));
      assert.equal(answers.filter((a) => a.json.outcome === 'credited').length, 1);
      assert.equal(answers.filter((a) => a.json.outcome === 'duplicate').length, 19);

      // The same session through the other event that may announce it: still the one credit.
      const async = await deliver(gw, paidEvent(raced, 10_000, {}, 'checkout.session.async_payment_succeeded'));
      assert.equal(async.json.outcome, 'duplicate');

      assert.equal(await balanceOf(), before + 125 * USD);
      const entries = await entriesOf(`stripe:${sessionId}`);
      assert.equal(entries.length, 1);
      assert.deepEqual([entries[0].kind, entries[0].amount, entries[0].key_id], ['topup', 25, null]);
      assert.equal((await entriesOf(`stripe:${raced}`)).length, 1);
      // One payment.succeeded per credited session in the outbox, whatever the number of deliveries.
      for (const [session, usd] of [[sessionId, 25], [raced, 100]] as const) {
        const events = await eventsOf('payment.succeeded', session);
        assert.equal(events.length, 1, `one payment.succeeded for ${session}`);
        assert.deepEqual([events[0].data.account_id, events[0].data.amount_usd, events[0].data.provider], [account.id, usd, 'stripe']);
      }
      await auditClean();
    });

    test('a bad signature is 400 and changes nothing: wrong secret, tampered body, no header, a stale timestamp', async () => {
      const before = await balanceOf();
      const payload = paidEvent(newSession(), 5_000);
      const cases: [string, string | null, string][] = [
        ['wrong secret', signatureOf(payload, 'whsec_not_the_gateways_secret'), payload],
        ['tampered body', signatureOf(payload), payload.replace('5000', '500000')],
        ['no header', null, payload],
        ['stale (an old delivery replayed)', signatureOf(payload, undefined, Math.floor(Date.now() / 1000) - 3_600), payload],
        ['garbage header', 't=1,v1=deadbeef', payload],
      ];
      for (const [name, signature, body] of cases) {
        const res = await deliver(gw, body, signature);
        assertError(res, 400, 'invalid_webhook_signature');
        assert.ok(res.status === 400, name);
      }
      assert.equal(await balanceOf(), before);
      assert.equal((await adminOk(gw, 'GET', `/payments?account_id=${account.id}`)).data.length, 2, 'no payment recorded');
    });

    test('an unpaid session, an unknown account, a non-USD session and another event type change nothing and are 200', async () => {
      const before = await balanceOf();
      const cases: [string, string][] = [
        ['unpaid', paidEvent(newSession(), 5_000, { payment_status: 'unpaid' })],
        ['unknown_account', paidEvent(newSession(), 5_000, { client_reference_id: 'acct_nobody' })],
        ['not_usd', paidEvent(newSession(), 5_000, { currency: 'eur' })],
        ['no_account', paidEvent(newSession(), 5_000, { client_reference_id: null })],
        ['event_type', stripeEvent('customer.created', { id: 'cus_1', object: 'customer' })],
      ];
      for (const [reason, payload] of cases) {
        const res = await deliver(gw, payload);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual([res.json.outcome, res.json.reason], ['ignored', reason]);
      }
      assert.equal(await balanceOf(), before);
      const logged = await waitFor(() => gw.logs.some((line) => line.includes('acct_nobody') && line.includes('not credited')), 10_000);
      assert.ok(logged, 'money paid for an unknown account is logged for the operator');
    });

    test('a partial then a full refund, and a dispute, take back once each, named after the payment', async () => {
      const refunded = newSession();
      const disputed = newSession();
      await deliver(gw, paidEvent(refunded, 4_000));
      await deliver(gw, paidEvent(disputed, 3_000));
      const start = await balanceOf();
      const charge = (cents: number) => stripeEvent('charge.refunded', { id: `ch_${refunded}`, object: 'charge', amount: 4_000, amount_refunded: cents, currency: 'usd', payment_intent: `pi_${refunded}`, refunded: cents === 4_000 });

      const partial = charge(1_000);
      for (let i = 0; i < 3; i++) assert.equal((await deliver(gw, partial)).json.outcome, i === 0 ? 'taken_back' : 'duplicate');
      assert.equal(await balanceOf(), start - 10 * USD);
      const full = charge(4_000);
      const fullAnswers = await Promise.all(Array.from({ length: 5 }, () => deliver(gw, full)));
      assert.equal(fullAnswers.filter((a) => a.json.outcome === 'taken_back').length, 1);
      assert.equal((await deliver(gw, partial)).json.outcome, 'duplicate', 'the older event delivered late changes nothing');
      assert.equal(await balanceOf(), start - 40 * USD);

      const dispute = stripeEvent('charge.dispute.created', { id: 'dp_e2e_1', object: 'dispute', amount: 3_000, currency: 'usd', charge: `ch_${disputed}`, payment_intent: `pi_${disputed}`, status: 'needs_response' });
      for (let i = 0; i < 3; i++) assert.equal((await deliver(gw, dispute)).json.outcome, i === 0 ? 'taken_back' : 'duplicate');
      assert.equal(await balanceOf(), start - 70 * USD);

      const ledger = await walkList(gw, `/accounts/${account.id}/ledger`, 500);
      const adjustments = ledger.filter((e) => e.kind === 'adjust');
      assert.deepEqual(
        adjustments.map((e) => [e.request_id, e.amount]).sort(),
        [
          [`stripe:dispute:dp_e2e_1`, -30],
          [`stripe:refund:ch_${refunded}:1000`, -10],
          [`stripe:refund:ch_${refunded}:4000`, -30],
        ].sort(),
      );
      for (const e of adjustments) assert.match(e.note, e.request_id.includes('dispute') ? new RegExp(disputed) : new RegExp(refunded));
      // One payment.refunded per reversal that took money, however often each was delivered.
      assert.deepEqual(
        (await eventsOf('payment.refunded', refunded)).map((e) => [e.data.kind, e.data.amount_usd]).sort(),
        [['refund', 10], ['refund', 30]],
      );
      assert.deepEqual((await eventsOf('payment.refunded', disputed)).map((e) => [e.data.kind, e.data.amount_usd]), [['dispute', 30]]);

      // A refund of a charge the gateway never credited: 200, nothing.
      const stranger = await deliver(gw, stripeEvent('charge.refunded', { id: 'ch_other', object: 'charge', amount: 100, amount_refunded: 100, currency: 'usd', payment_intent: 'pi_other' }));
      assert.deepEqual([stranger.status, stranger.json.outcome, stranger.json.reason], [200, 'ignored', 'unknown_payment']);
      assert.equal(await balanceOf(), start - 70 * USD);

      // A refund of a checkout this gateway made (its charge names the account) that arrives before the
      // checkout's credit: 409, nothing changes; once the credit is in, Stripe's retry takes it back.
      const early = newSession();
      const earlyRefund = stripeEvent('charge.refunded', { id: `ch_${early}`, object: 'charge', amount: 2_000, amount_refunded: 2_000, currency: 'usd', payment_intent: `pi_${early}`, metadata: { tollgate_account_id: account.id } });
      const first = await deliver(gw, earlyRefund);
      assert.deepEqual([first.status, first.json.outcome, first.json.reason], [409, 'ignored', 'payment_not_recorded']);
      assert.equal(await balanceOf(), start - 70 * USD);
      assert.equal((await deliver(gw, paidEvent(early, 2_000))).json.outcome, 'credited');
      assert.equal((await deliver(gw, earlyRefund)).json.outcome, 'taken_back');
      assert.equal(await balanceOf(), start - 70 * USD);
      await auditClean();
    });

    test('a refund past the available balance takes what is there and records the rest as unrecovered', async () => {
      const spent = await adminOk(gw, 'POST', '/accounts', { body: { name: 'spender' } });
      const sessionId = newSession();
      await deliver(gw, stripeEvent('checkout.session.completed', checkoutSession({ id: sessionId, amount_total: 1_000, client_reference_id: spent.id, payment_intent: `pi_${sessionId}` })));
      await adminOk(gw, 'POST', `/accounts/${spent.id}/adjust`, { body: { amount: -6, reason: 'spent elsewhere' } });
      const res = await deliver(gw, stripeEvent('charge.refunded', { id: `ch_${sessionId}`, object: 'charge', amount: 1_000, amount_refunded: 1_000, currency: 'usd', payment_intent: `pi_${sessionId}` }));
      assert.deepEqual([res.status, res.json.outcome], [200, 'taken_back']);
      assert.equal(await balanceOf(spent.id), 0, 'never overdrawn');
      const [payment] = (await adminOk(gw, 'GET', `/payments?account_id=${spent.id}`)).data;
      assert.deepEqual([payment.amount, payment.refunded, payment.unrecovered], [10, 10, 6]);
      assert.ok(await waitFor(() => gw.logs.some((line) => line.includes('was not recovered')), 10_000), 'the shortfall is logged for the operator');
      await auditClean();
    });

    test('payments are listed by the admin API and the CLI alike; tollgate audit is clean', async () => {
      // Two credited sessions, the refunded one, the disputed one and the one refunded early: five pages of one.
      const listed = await walkList(gw, `/payments?account_id=${account.id}`, 1);
      assert.equal(listed.length, 5);
      const [early, disputed, refunded] = listed;
      assert.deepEqual([early.amount, early.refunded], [20, 20]);
      assert.deepEqual([disputed.amount, disputed.disputed, disputed.refunded, disputed.unrecovered], [30, 30, 0, 0]);
      assert.deepEqual([refunded.amount, refunded.refunded, refunded.payment_intent], [40, 40, `pi_${refunded.id}`]);
      assert.ok(listed.every((p) => p.object === 'payment' && p.account_id === account.id && p.provider === 'stripe'));
      const cli = parseJsonOutput(await gw.cli(['payments', 'list', '--account', account.id, '--json']), 'payments list');
      assert.deepEqual(cli, listed);
      const table = await gw.cli(['payments', 'list']);
      assert.equal(table.code, 0, table.stderr);
      assert.match(table.stdout, /UNRECOVERED/);
      const audit = await gw.cli(['audit']);
      assert.equal(audit.code, 0, audit.stdout + audit.stderr);
      assert.match(audit.stdout, /no violations/);
      for (const query of ['limit=0', 'after=not-a-cursor', 'surprise=1', 'account_id=']) {
        assertError(await call(gw, 'GET', `//admin/v1/payments?${query}`, { key: ADMIN_TOKEN }), 400, 'invalid_request');
      }
      assertError(await call(gw, 'GET', '//admin/v1/payments'), 401, 'invalid_admin_token');
      assert.deepEqual((await adminOk(gw, 'GET', '/payments?account_id=acct_nobody')).data, []);
    });

    test('config check shows payments on with the bounds, never a secret', async () => {
      const [text, json] = await Promise.all([gw.cli(['config', 'check']), gw.cli(['config', 'check', '--json'])]);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, new RegExp(`payments: stripe, 5 to 500 USD per checkout, API ${fake.url}`));
      assert.deepEqual(parseJsonOutput(json, 'config check --json').payments, { provider: 'stripe', currency: 'usd', min_amount: 5, max_amount: 500, api_base: fake.url });
      for (const secret of Object.values(stripeEnv)) assert.ok(!text.stdout.includes(secret) && !json.stdout.includes(secret), 'no secret printed');
    });

    test('the gateway called Stripe only to create Checkout Sessions, never for a webhook', () => {
      assert.ok(fake.requests.length > 0);
      assert.deepEqual([...new Set(fake.requests.map((r) => `${r.method} ${r.path}`))], ['POST /v1/checkout/sessions']);
      assert.ok(!gw.logs.join('\n').includes(stripeEnv.STRIPE_SECRET_KEY) && !gw.logs.join('\n').includes(stripeEnv.STRIPE_WEBHOOK_SECRET), 'no secret logged');
    });
  });
}

describe('Stripe top-ups without payments.stripe', () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;
  before(async () => {
    mock = await startMockUpstream();
    gw = await startGateway({ config: mockConfig(mock, adminConfigYaml), env: { TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN } });
  });
  after(async () => {
    await stopGateway(gw, 10_000);
    await mock?.close();
  });

  test('checkout is 404 payments_disabled, the options say disabled, and the webhook is 404', async () => {
    const created = await adminOk(gw, 'POST', '/accounts', { body: { name: 'nopay' } });
    const { token } = await adminOk(gw, 'POST', `/accounts/${created.id}/token`);
    assertError(await call(gw, 'POST', '/account/checkout', { key: token, body: { amount: 10 } }), 404, 'payments_disabled');
    assert.deepEqual((await call(gw, 'GET', '/account/checkout', { key: token })).json, { object: 'checkout_options', currency: 'usd', enabled: false, min_amount: null, max_amount: null });
    const payload = stripeEvent('checkout.session.completed', checkoutSession({ id: 'cs_x', amount_total: 1_000, client_reference_id: created.id }));
    assertError(await deliver(gw, payload), 404, 'payments_disabled');
    assert.equal(nano((await adminOk(gw, 'GET', `/accounts/${created.id}`)).balance), 0);
  });
});

describe('Stripe top-ups: a database failure is 503, so Stripe retries', { skip: (await adminDialects())[1]!.skip }, () => {
  let mock: MockUpstream;
  let fake: FakeStripe;
  let schema: PgSchema;
  let proxy: PgFaultProxy;
  let gw: GatewayProcess;
  before(async () => {
    mock = await startMockUpstream();
    fake = await startFakeStripe();
    schema = await freshPgSchema();
    proxy = await startPgFaultProxy(schema.url);
    gw = await startGateway({
      config: mockConfig(mock, adminConfigYaml + stripeConfigYaml(fake)),
      env: { TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN, ...stripeEnv },
      database: proxy.urlFor(schema.url),
    });
  });
  after(async () => {
    if (gw) await stopGateway(gw, 10_000);
    await mock?.close();
    await fake?.close();
    await proxy?.close();
    await schema?.drop();
  });

  test('a paid session delivered while the database is down is 503 and credits nothing; the retry credits it once', { timeout: 60_000 }, async () => {
    const created = await adminOk(gw, 'POST', '/accounts', { body: { name: 'outage' } });
    const payload = stripeEvent('checkout.session.completed', checkoutSession({ id: 'cs_test_outage', amount_total: 1_500, client_reference_id: created.id, payment_intent: 'pi_outage' }));
    await proxy.takeDown();
    const during = await deliver(gw, payload);
    assertError(during, 503, 'ledger_unavailable');
    await proxy.bringBack();
    const retried = await waitFor(async () => {
      const res = await deliver(gw, payload);
      return res.status === 200 ? res : undefined;
    }, 20_000, 200);
    assert.ok(retried, 'the retry succeeds once the database is back');
    assert.equal(retried.json.outcome, 'credited');
    assert.equal((await deliver(gw, payload)).json.outcome, 'duplicate');
    assert.equal(nano((await adminOk(gw, 'GET', `/accounts/${created.id}`)).balance), 15 * USD);
    const audit = await adminOk(gw, 'GET', '/audit');
    assert.equal(audit.ok, true, JSON.stringify(audit.violations));
  });
});

describe('Stripe top-ups: serve --workers 2 on SQLite', () => {
  let mock: MockUpstream;
  let fake: FakeStripe;
  let gw: GatewayProcess;
  before(async () => {
    mock = await startMockUpstream();
    fake = await startFakeStripe();
    gw = await startGateway({ config: mockConfig(mock, adminConfigYaml + stripeConfigYaml(fake)), env: { TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN, ...stripeEnv }, args: ['--workers', '2'] });
  });
  after(async () => {
    if (gw) await stopGateway(gw, 10_000);
    await mock?.close();
    await fake?.close();
  });

  test('20 concurrent deliveries of one session, served by two processes, credit once', { timeout: 60_000 }, async () => {
    const created = await adminOk(gw, 'POST', '/accounts', { body: { name: 'workers' } });
    const payload = stripeEvent('checkout.session.completed', checkoutSession({ id: 'cs_test_workers', amount_total: 7_700, client_reference_id: created.id, payment_intent: 'pi_workers' }));
    const answers = await Promise.all(Array.from({ length: 20 }, () => deliver(gw, payload)));
    assert.deepEqual(answers.map((a) => a.status), Array(20).fill(200));
    assert.equal(answers.filter((a) => a.json.outcome === 'credited').length, 1);
    assert.equal(nano((await adminOk(gw, 'GET', `/accounts/${created.id}`)).balance), 77 * USD);
    const workers = await waitFor(() => {
      const seen = new Set(gw.logs.flatMap((line) => (line.includes('stripe webhook') ? [JSON.parse(line).worker] : [])));
      return seen.size === 2 ? seen : undefined;
    }, 10_000);
    assert.ok(workers, 'both worker processes answered deliveries');
    assert.equal((await adminOk(gw, 'GET', '/audit')).ok, true);
  });
});
