// The dashboard's money guard rails in a real headless Chromium, against the real gateway: a top-up of a
// key revoked after the page showed it (another operator, the CLI) is refused and the dialog says why;
// an amount past the ledger's maximum is refused naming it, exactly as typed (never rounded to a number
// that would pass); balances up to the maximum show to the nano-dollar. Nothing changes on a refusal.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { type Json } from '../support/e2e.js';
import { chromiumSkipReason, watchPage, type WatchedPage } from '../support/browser.js';
import { dashboardRig } from '../support/dashboard-rig.js';

const skip = chromiumSkipReason();
const ADMIN_TOKEN = 'dashboard-money-admin-token-0123456789abcdef';

describe('dashboard: money guard rails', { skip }, () => {
  const rig = dashboardRig(ADMIN_TOKEN);

  const admin = rig.adminCall;
  const createKey = async (body: Json): Promise<Json> => {
    const res = await admin('POST', '/keys', body);
    assert.equal(res.status, 200, res.text);
    return res.json;
  };

  async function keysPage(watched: WatchedPage): Promise<Page> {
    const { page } = watched;
    await rig.signIn(page);
    await page.click('[data-nav=keys]');
    return page;
  }

  /** Opens the key's top-up dialog, types `amount` and submits; returns the error the dialog shows. */
  async function refusedTopUp(page: Page, id: string, amount: string, before?: () => Promise<void>): Promise<string> {
    await page.locator(`tr[data-key="${id}"] [data-action=topup]`).click();
    await page.fill('#topup-amount', amount);
    await before?.();
    await page.click('[data-dialog=topup] button[type=submit]');
    const alert = page.locator('[data-dialog=topup] [role=alert]');
    await alert.waitFor();
    const text = (await alert.textContent())!.trim();
    await page.click('[data-dialog=topup] button.secondary');
    return text;
  }

  test('a top-up of a key revoked since the page showed it is refused, and the dialog says so', async () => {
    const key = await createKey({ name: 'revoked-meanwhile', balance: 1 });
    const watched = await watchPage(rig.browser, 'money-revoked');
    watched.expect(409, /\/admin\/v1\/keys\/[^/]+\/topup$/);
    const page = await keysPage(watched);
    await page.locator(`tr[data-key="${key.id}"][data-status=active]`).waitFor();
    const shown = await refusedTopUp(page, key.id, '5', async () => {
      const revoked = await admin('POST', `/keys/${key.id}/revoke`, {});
      assert.equal(revoked.status, 200, revoked.text);
    });
    assert.match(shown, new RegExp(`Key ${key.id} is revoked: its balance can no longer change, so a top-up was refused`));
    await watched.shot('topup-revoked');
    const now = (await admin('GET', `/keys/${key.id}`)).json;
    assert.deepEqual([now.balance, now.status], [1, 'revoked'], 'nothing changed');
    assert.equal((await admin('GET', `/keys/${key.id}/ledger`)).json.data.length, 1, 'no ledger entry');
    watched.assertClean();
  });

  test('balances up to the maximum show exactly; a top-up past it is refused naming the maximum; amounts go as typed', async () => {
    const full = await createKey({ name: 'money-full', balance: '8388608' });
    const almost = await createKey({ name: 'money-almost', balance: '8388607.999999999' });
    const watched = await watchPage(rig.browser, 'money-maximum');
    watched.expect(400, /\/admin\/v1\/keys\/[^/]+\/topup$/);
    const page = await keysPage(watched);
    assert.equal((await page.locator(`tr[data-key="${full.id}"] td.balance`).textContent())!.trim(), '$8,388,608.00');
    assert.equal((await page.locator(`tr[data-key="${almost.id}"] td.balance`).textContent())!.trim(), '$8,388,607.999999999');

    const pushedPast = await refusedTopUp(page, full.id, '0.000000001');
    assert.match(pushedPast, /would take the balance \(8388608 USD\) past 8388608 USD, the largest balance the ledger holds; at most 0 USD more fits/);
    const tooLarge = await refusedTopUp(page, almost.id, '8388608.000000001');
    assert.match(tooLarge, /8388608\.000000001 USD is past 8388608 USD, the largest amount the ledger holds/);
    await watched.shot('topup-past-maximum');
    // The amount goes as typed: as a JSON number, 1.0000000000000001 would have been 1 and credited.
    const tooPrecise = await refusedTopUp(page, almost.id, '1.0000000000000001');
    assert.match(tooPrecise, /expected a positive USD amount with at most 9 decimals, got "1\.0000000000000001"/);
    assert.equal((await admin('GET', `/keys/${full.id}`)).json.balance, 8388608, 'nothing changed');
    assert.equal((await admin('GET', `/keys/${almost.id}`)).json.balance, 8388607.999999999, 'nothing changed');
    assert.equal((await admin('GET', `/keys/${almost.id}/ledger`)).json.data.length, 1, 'no ledger entry');
    watched.assertClean();
  });
});
