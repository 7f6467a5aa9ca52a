// The dashboard in a real headless Chromium, as an account token's holder uses it (tga-…;
// docs/adr/0047-accounts.md): sign in → the account's figures equal GET /v1/account's, its keys with caps
// and spend equal /v1/account/keys, spend by key and by model equal the account's usage summaries →
// create a key (the secret shown once, and it works) → cap a key → revoke one (it answers 401 after).
// A wrong account token gets a clear message and keeps nothing.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { call, postChat, type Json } from '../support/e2e.js';
import { chromiumSkipReason, watchPage } from '../support/browser.js';
import { dashboardRig } from '../support/dashboard-rig.js';

const skip = chromiumSkipReason();
const ADMIN_TOKEN = 'dashboard-account-token-admin-0123456789abcdef';

describe('dashboard: the account token’s holder', { skip }, () => {
  const rig = dashboardRig(ADMIN_TOKEN);

  const { admin } = rig;
  const own = async (token: string, path = ''): Promise<Json> => {
    const res = await call(rig.gw, 'GET', `/account${path}`, { key: token });
    assert.equal(res.status, 200, `GET /v1/account${path}: ${res.text}`);
    return res.json;
  };
  const chat = (secret: string) => postChat(rig.gw, secret, { model: 'gpt-test', messages: [{ role: 'user', content: 'Hello' }] });

  /** The account's figures on the page equal GET /v1/account's. */
  async function assertFigures(page: Page, token: string): Promise<Json> {
    const account = await own(token);
    await page.locator(`[data-figure=balance][data-usd="${account.balance}"]`).waitFor();
    for (const figure of ['balance', 'held', 'available', 'spent'] as const) {
      assert.equal(Number(await page.locator(`[data-figure=${figure}]`).getAttribute('data-usd')), account[figure], `${figure} is the API's figure`);
    }
    assert.equal(await page.locator('[data-figure=requests]').getAttribute('data-value'), String(account.totals.requests));
    return account;
  }

  /** A key's row, once its `data-<attribute>` reads `value`; its figures equal the API's key object. */
  async function assertKeyRow(page: Page, token: string, id: string, attribute: string, value: string) {
    const row = page.locator(`table.account-keys tr[data-key="${id}"][data-${attribute}="${value}"]`);
    await row.waitFor();
    const key = ((await own(token, '/keys')).data as Json[]).find((k) => k.id === id)!;
    const read = async (name: string) => {
      const text = await row.getAttribute(`data-${name}`);
      return text === '' ? null : Number(text);
    };
    assert.deepEqual(
      { spent: await read('spent'), credit_limit: await read('credit-limit'), credit_left: await read('credit-left'), available: await read('available'), status: await row.getAttribute('data-status') },
      { spent: key.spent, credit_limit: key.credit_limit, credit_left: key.credit_left, available: key.available, status: key.status },
    );
    return key;
  }

  test('sees the account as GET /v1/account does; creates, caps and revokes keys', async () => {
    const account = await admin('POST', '/accounts', { name: 'team', balance: '5' });
    const { token } = await admin('POST', `/accounts/${account.id}/token`, {});
    const first = await admin('POST', '/keys', { name: 'ci', account_id: account.id, credit_limit: '2' });
    for (let i = 0; i < 2; i++) assert.equal((await chat(first.key)).status, 200);

    const watched = await watchPage(rig.browser, 'account-token');
    const { page } = watched;
    await rig.signIn(page, token);
    await page.locator(`[data-account="${account.id}"]`).waitFor();
    assert.equal(await page.locator('[data-nav]').count(), 0, 'no operator pages for an account holder');
    assert.equal((await page.locator('header .hint').textContent())!.trim(), 'Account');
    const before = await assertFigures(page, token);
    assert.ok(before.spent > 0, 'the calls were charged');
    await assertKeyRow(page, token, first.id, 'credit-limit', '2');

    // Spend by key and by model: the account's usage summaries.
    for (const [table, groupBy, group] of [
      ['by-key', 'key', first.id],
      ['by-model', 'model', 'gpt-test'],
    ] as const) {
      const rows: Json[] = (await own(token, `/usage/summary?group_by=${groupBy}`)).data;
      assert.equal(rows.length, 1, `${groupBy}: ${JSON.stringify(rows)}`);
      const shown = page.locator(`[data-totals=${table}] tr[data-group="${group}"]`);
      await shown.waitFor();
      assert.equal(Number(await shown.getAttribute('data-cost')), rows[0].cost, `spend by ${groupBy} is the summary's`);
    }
    assert.equal((await page.locator(`[data-totals=by-key] tr[data-group="${first.id}"] td`).first().textContent())!.trim(), 'ci', 'a key reads by its name');
    await watched.shot('account');

    // Create a key with a credit limit: the secret shown once, and it works.
    await page.click('[data-action=create]');
    await page.fill('#key-name', 'laptop');
    await page.fill('#key-credit_limit', '0.5');
    await page.click('[data-dialog=create] button[type=submit]');
    const secret = (await page.locator('[data-dialog=secret] [data-secret]').textContent())!.trim();
    assert.match(secret, /^tg-[A-Za-z0-9_-]{43}$/);
    await watched.shot('key-created');
    await page.click('[data-dialog=secret] [data-close]');
    assert.ok(!(await page.content()).includes(secret), 'the secret appears nowhere once the dialog closes');
    const created = ((await own(token, '/keys')).data as Json[]).find((k) => k.name === 'laptop')!;
    assert.equal(created.key, undefined, 'the API never shows the secret again');
    await assertKeyRow(page, token, created.id, 'credit-limit', '0.5');
    assert.equal((await chat(secret)).status, 200, 'the new key works');

    // Cap the first key.
    await page.locator(`tr[data-key="${first.id}"] [data-action=cap]`).click();
    await page.fill('#cap-credit_limit', '1');
    await page.click('[data-dialog=cap] button[type=submit]');
    const capped = await assertKeyRow(page, token, first.id, 'credit-limit', '1');
    assert.equal(capped.credit_limit, 1, 'the API agrees');

    // Revoke the new key: it answers 401 after.
    await page.locator(`tr[data-key="${created.id}"] [data-action=revoke]`).click();
    await page.click('[data-dialog=revoke] [data-confirm]');
    await assertKeyRow(page, token, created.id, 'status', 'revoked');
    assert.equal((await chat(secret)).status, 401, 'the revoked key is refused');
    await page.reload();
    await page.locator(`[data-account="${account.id}"]`).waitFor();
    await assertFigures(page, token);
    await watched.shot('after-revoke');
    watched.assertClean();
  });

  test('a wrong account token shows a clear message and signs nobody in', async () => {
    const watched = await watchPage(rig.browser, 'account-token-wrong');
    watched.expect(401, /\/v1\/account$/);
    const { page } = watched;
    await rig.signIn(page, `tga-${'x'.repeat(43)}`);
    await page.getByRole('alert').waitFor();
    assert.match((await page.getByRole('alert').textContent())!, /account token is not valid/);
    assert.equal(await page.evaluate('sessionStorage.length'), 0, 'nothing kept');
    watched.assertClean();
  });
});
