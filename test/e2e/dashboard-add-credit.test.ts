// The dashboard's "Add credit" in a real headless Chromium (docs/adr/0050-stripe-top-ups.md): the account
// token holder and a key holder each type an amount, the page posts /v1/account/checkout (the real SDK in
// the gateway calls the local fake of Stripe) and the browser goes to the Checkout page it answered; a
// bad amount shows the server's message and calls Stripe not at all. Without payments.stripe the button
// is not there (and the page makes no failing request).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { call, type Json } from '../support/e2e.js';
import { chromiumSkipReason, launchChromium, watchPage } from '../support/browser.js';
import { startFakeStripe, stripeConfigYaml, stripeEnv, type FakeStripe } from '../support/fake-stripe.js';
import { mockConfig, startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';

const skip = chromiumSkipReason();
const ADMIN_TOKEN = 'dashboard-add-credit-admin-0123456789abcdef';

describe('dashboard: Add credit', { skip }, () => {
  let mock: MockUpstream;
  let fake: FakeStripe;
  let gw: GatewayProcess;
  let plain: GatewayProcess;
  let browser: Browser;

  before(async () => {
    mock = await startMockUpstream();
    fake = await startFakeStripe({ localCheckout: true });
    gw = await startGateway({ config: mockConfig(mock, `admin:\n  token: ${ADMIN_TOKEN}\n` + stripeConfigYaml(fake)), env: stripeEnv });
    plain = await startGateway({ config: mockConfig(mock, `admin:\n  token: ${ADMIN_TOKEN}\n`) });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await mock?.close();
    await fake?.close();
    if (gw) await stopGateway(gw, 10_000);
    if (plain) await stopGateway(plain, 10_000);
  });

  const admin = async (on: GatewayProcess, method: string, path: string, body?: unknown): Promise<Json> => {
    const res = await call(on, method, `//admin/v1${path}`, { key: ADMIN_TOKEN, body });
    assert.equal(res.status, 200, `${method} ${path}: ${res.text}`);
    return res.json;
  };

  async function signIn(page: Page, on: GatewayProcess, credential: string, ready: string) {
    await page.goto(`${on.origin}/dashboard/`);
    await page.fill('#token', credential);
    await page.click('button[type=submit]');
    await page.locator(ready).waitFor();
  }

  /** Add credit of `amount`: the browser lands on the fake Checkout page of the session Stripe made. */
  async function addCredit(page: Page, amount: string) {
    const calls = fake.requests.length;
    await page.click('[data-action=add-credit]');
    await page.fill('#credit-amount', amount);
    await page.click('[data-dialog=add-credit] button[type=submit]');
    await page.locator('h1[data-session]').waitFor();
    const session = await page.locator('h1[data-session]').getAttribute('data-session');
    assert.match(session!, /^cs_test_/);
    assert.equal(fake.requests.length, calls + 1, 'one Checkout Session');
    return { session, sent: fake.requests.at(-1)! };
  }

  test('the account token holder and a key holder each go to Stripe Checkout for the amount typed', async () => {
    const account = await admin(gw, 'POST', '/accounts', { name: 'team' });
    const { token } = await admin(gw, 'POST', `/accounts/${account.id}/token`, {});
    const key = await admin(gw, 'POST', '/keys', { name: 'dev', account_id: account.id });

    const holder = await watchPage(browser, 'add-credit-account');
    await signIn(holder.page, gw, token, `[data-account="${account.id}"]`);
    // A bad amount: the server's message, and no Stripe call.
    const before = fake.requests.length;
    holder.expect(400, /\/v1\/account\/checkout$/);
    await holder.page.click('[data-action=add-credit]');
    await holder.page.fill('#credit-amount', '1');
    await holder.page.click('[data-dialog=add-credit] button[type=submit]');
    await holder.page.locator('[data-dialog=add-credit] [role=alert]').waitFor();
    assert.match((await holder.page.locator('[data-dialog=add-credit] [role=alert]').textContent())!, /from 5 to 500 USD/);
    assert.equal(fake.requests.length, before);
    await holder.shot('add-credit-refused');
    await holder.page.fill('#credit-amount', '25');
    await holder.page.click('[data-dialog=add-credit] button[type=submit]');
    await holder.page.locator('h1[data-session]').waitFor();
    const sent = fake.requests.at(-1)!;
    assert.deepEqual([sent.form['line_items[0][price_data][unit_amount]'], sent.form.client_reference_id, sent.form['metadata[tollgate_key_id]']], ['2500', account.id, undefined]);
    holder.assertClean();

    const keyHolder = await watchPage(browser, 'add-credit-key');
    await signIn(keyHolder.page, gw, key.key, '[data-figure=balance] .value');
    await keyHolder.shot('me-with-add-credit');
    const byKey = await addCredit(keyHolder.page, '12.50');
    assert.deepEqual([byKey.sent.form['line_items[0][price_data][unit_amount]'], byKey.sent.form.client_reference_id, byKey.sent.form['metadata[tollgate_key_id]']], ['1250', account.id, key.id]);
    keyHolder.assertClean();
  });

  test('without payments.stripe there is no Add credit button, and no failing request', async () => {
    const account = await admin(plain, 'POST', '/accounts', { name: 'nopay' });
    const { token } = await admin(plain, 'POST', `/accounts/${account.id}/token`, {});
    const watched = await watchPage(browser, 'add-credit-off');
    await signIn(watched.page, plain, token, `[data-account="${account.id}"]`);
    await watched.page.locator('[data-figure=balance]').waitFor();
    // The options answer has arrived (the page asked for it) and said no.
    await watched.page.waitForLoadState('networkidle');
    assert.ok(watched.requests().some((r) => r.url.endsWith('/v1/account/checkout')));
    assert.equal(await watched.page.locator('[data-action=add-credit]').count(), 0);
    watched.assertClean();
  });
});
