// The operator's Accounts pages in a real headless Chromium, against the real gateway process
// (docs/adr/0047-accounts.md): create an account with an opening balance and a budget → top it up → issue
// a key into it with a credit limit (the secret shown once) → spend through that key → the account's
// figures, each key's spend, credit limit and credit left, and spend by key equal the admin API's; the
// keys list and the key's page name its account and cap; suspend and resume; issue the account token
// (shown once); personal accounts hidden until asked for.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { postChat, waitFor, type Json } from '../support/e2e.js';
import { chromiumSkipReason, watchPage, type WatchedPage } from '../support/browser.js';
import { dashboardRig } from '../support/dashboard-rig.js';
import { usdToNano } from '../support/money.js';

const skip = chromiumSkipReason();
const ADMIN_TOKEN = 'dashboard-accounts-admin-token-0123456789abcdef';

describe('dashboard: the operator’s accounts', { skip }, () => {
  const rig = dashboardRig(ADMIN_TOKEN);

  const { admin } = rig;

  const signIn = (watched: WatchedPage): Promise<Page> => rig.signIn(watched.page, undefined, '[data-nav=accounts]');

  /** The page's money figures, as the API's numbers (`data-usd`), once the balance figure reads `balance`. */
  async function figuresWhen(page: Page, balance: number): Promise<Record<string, number>> {
    await page.locator(`[data-figure=balance][data-usd="${balance}"]`).waitFor();
    const read = async (id: string) => Number(await page.locator(`[data-figure=${id}]`).getAttribute('data-usd'));
    return { balance: await read('balance'), held: await read('held'), available: await read('available'), spent: await read('spent') };
  }

  test('create an account, top it up, issue a key into it with a credit limit; every figure is the API’s', async () => {
    const personal = await rig.gw.createKey({ name: 'solo', balance: 1 });
    const watched = await watchPage(rig.browser, 'accounts');
    const page = await signIn(watched);

    // The list: personal accounts hidden until asked for.
    await page.click('[data-nav=accounts]');
    await page.getByText('No accounts yet.').waitFor();
    await page.check('input[name=include_personal]');
    await page.locator(`tr[data-account="${personal.account_id}"][data-personal=true]`).waitFor();
    await page.uncheck('input[name=include_personal]');
    await page.getByText('No accounts yet.').waitFor();

    // Create: name, opening balance, budget; the page opens the new account.
    await page.click('[data-action=create-account]');
    await page.fill('#account-name', 'acme');
    await page.fill('#account-balance', '10');
    await page.fill('#account-budget', '5');
    await page.selectOption('#account-budget_period', 'week');
    await page.click('[data-dialog=create-account] button[type=submit]');
    const section = page.locator('[data-account-page]');
    await section.waitFor();
    const id = (await section.getAttribute('data-account-page'))!;
    let api = await admin('GET', `/accounts/${id}`);
    assert.deepEqual([api.name, api.balance, api.budget, api.budget_period, api.personal], ['acme', 10, 5, 'week', false]);
    assert.deepEqual(await figuresWhen(page, 10), { balance: api.balance, held: api.held, available: api.available, spent: api.spent });
    assert.match((await page.locator('[data-field=budget]').textContent())!, /\$0\.00 of \$5\.00 per week/);
    await watched.shot('account-created');

    // Top up.
    await page.click('[data-action=account-topup]');
    await page.fill('#account-topup-amount', '2.5');
    await page.click('[data-dialog=account-topup] button[type=submit]');
    const toppedUp = await figuresWhen(page, 12.5);
    api = await admin('GET', `/accounts/${id}`);
    assert.deepEqual(toppedUp, { balance: api.balance, held: api.held, available: api.available, spent: api.spent }, 'the API agrees');
    assert.equal(api.balance, 12.5);

    // A key into the account, with a credit limit: no opening balance is asked for; the secret shown once.
    await page.click('[data-action=create]');
    assert.equal(await page.locator('[data-dialog=create] #key-balance').count(), 0, 'a key in an account has no balance of its own');
    await page.fill('#key-name', 'service-a');
    await page.fill('#key-credit_limit', '1.25');
    await page.click('[data-dialog=create] button[type=submit]');
    const secret = (await page.locator('[data-dialog=secret] [data-secret]').textContent())!.trim();
    assert.match(secret, /^tg-[A-Za-z0-9_-]{43}$/);
    await page.click('[data-dialog=secret] [data-close]');
    const keys: Json[] = (await admin('GET', `/accounts/${id}/keys`)).data;
    assert.equal(keys.length, 1);
    const keyId: string = keys[0].id;
    assert.deepEqual([keys[0].account_id, keys[0].credit_limit, keys[0].credit_left], [id, 1.25, 1.25]);

    // Spend through the key, then the page again: the account, the key row and spend by key are the API's.
    for (let i = 0; i < 3; i++) assert.equal((await postChat(rig.gw, secret, { model: 'gpt-test', messages: [{ role: 'user', content: `Hello ${i}` }] })).status, 200);
    api = await admin('GET', `/accounts/${id}`);
    assert.ok(api.spent > 0 && api.balance < 12.5, 'the calls were charged to the account');
    await page.reload();
    assert.deepEqual(await figuresWhen(page, api.balance), { balance: api.balance, held: api.held, available: api.available, spent: api.spent });
    assert.equal((await page.locator('[data-figure=balance] .value').textContent())!.trim(), usdText(api.balance), 'the balance reads as the exact amount');
    const key = await admin('GET', `/keys/${keyId}`);
    const row = page.locator(`table.account-keys tr[data-key="${keyId}"]`);
    await row.waitFor();
    assert.deepEqual(
      {
        spent: Number(await row.getAttribute('data-spent')),
        credit_limit: Number(await row.getAttribute('data-credit-limit')),
        credit_left: Number(await row.getAttribute('data-credit-left')),
        available: Number(await row.getAttribute('data-available')),
      },
      { spent: key.spent, credit_limit: key.credit_limit, credit_left: key.credit_left, available: key.available },
    );
    assert.equal((await row.locator('td.credit-left').textContent())!.trim(), usdText(key.credit_left));
    assert.equal(usdToNano(key.spent), usdToNano(api.spent), 'the one key spent what the account spent');
    const summary: Json[] = (await admin('GET', `/usage/summary?account_id=${id}&group_by=key`)).data;
    assert.equal(summary.length, 1);
    const byKey = page.locator(`[data-totals=by-key] tr[data-group="${keyId}"]`);
    await byKey.waitFor();
    assert.equal(Number(await byKey.getAttribute('data-cost')), summary[0].cost, 'spend by key is the summary’s');
    assert.equal((await byKey.locator('td').first().textContent())!.trim(), 'service-a', 'named by the key’s name');
    await watched.shot('account-spent');

    // The keys list names the key's account (a link) and its credit limit; so does the key's page.
    await page.click('[data-nav=keys]');
    const listed = page.locator(`tr[data-key="${keyId}"]`);
    await listed.locator('a[data-account-link]').filter({ hasText: 'acme' }).waitFor();
    assert.equal(Number(await listed.locator('td.credit').getAttribute('data-credit-limit')), 1.25);
    assert.equal((await listed.locator('td.credit').textContent())!.trim(), `${usdText(key.credit_left)} left of $1.25`);
    assert.equal((await page.locator(`tr[data-key="${personal.id}"] a[data-account-link]`).textContent())!.trim(), 'personal account');
    await watched.shot('keys-with-accounts');
    await listed.locator('a[data-key-link]').click();
    await page.locator(`[data-key-page="${keyId}"] [data-field=account] a`).filter({ hasText: 'acme' }).waitFor();
    assert.equal(Number(await page.locator('[data-figure=credit-left]').getAttribute('data-usd')), key.credit_left);
    assert.equal(Number(await page.locator('[data-figure=available]').getAttribute('data-usd')), key.available);
    await page.locator('[data-field=account] a').click();
    await page.locator(`[data-account-page="${id}"]`).waitFor();

    // Suspend and resume.
    await page.click('[data-action=account-suspend]');
    await page.click('[data-dialog=account-suspend] [data-confirm]');
    await page.locator(`[data-account-page="${id}"][data-status=suspended]`).waitFor();
    assert.equal((await admin('GET', `/accounts/${id}`)).status, 'suspended');
    assert.equal((await postChat(rig.gw, secret, { model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] })).status, 402, 'its keys are refused');
    await page.click('[data-action=account-resume]');
    await page.click('[data-dialog=account-resume] [data-confirm]');
    await page.locator(`[data-account-page="${id}"][data-status=active]`).waitFor();
    assert.equal((await admin('GET', `/accounts/${id}`)).status, 'active');

    // The account token: shown once, in the secret box; the API keeps only its prefix.
    await page.click('[data-action=account-token]');
    await page.click('[data-dialog=account-token] [data-confirm]');
    const token = (await page.locator('[data-dialog=secret] [data-secret]').textContent())!.trim();
    assert.match(token, /^tga-[A-Za-z0-9_-]{43}$/);
    await watched.shot('account-token');
    await page.click('[data-dialog=secret] [data-close]');
    assert.ok(!(await page.content()).includes(token), 'the token appears nowhere once the dialog closes');
    const withToken = await admin('GET', `/accounts/${id}`);
    assert.ok(withToken.token_prefix && token.startsWith(withToken.token_prefix), 'the account names the token by its prefix');
    assert.ok(await waitFor(async () => (await page.locator('[data-field=token]').textContent())!.includes(withToken.token_prefix), 5000));
    assert.equal(await page.locator('[data-action=account-token]').textContent(), 'Rotate token');

    // The list shows the account with the API's balance.
    await page.click('[data-nav=accounts]');
    const listedAccount = page.locator(`tr[data-account="${id}"]`);
    await listedAccount.waitFor();
    assert.equal(Number(await listedAccount.getAttribute('data-balance')), (await admin('GET', `/accounts/${id}`)).balance);
    await watched.shot('accounts-list');
    watched.assertClean();
  });
});

/** The dashboard's reading of a USD amount: exact, at least two decimals, thousands separated. */
function usdText(value: number): string {
  const [whole, fraction = ''] = Math.abs(value).toFixed(9).split('.');
  return `${value < 0 ? '−' : ''}$${Number(whole).toLocaleString('en-US')}.${fraction.replace(/0+$/, '').padEnd(2, '0')}`;
}
