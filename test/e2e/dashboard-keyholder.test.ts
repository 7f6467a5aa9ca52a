// The dashboard in a real headless Chromium, as a key holder uses it: sign in with a Tollgate key, see
// the balance, held and available that GET /v1/key reports, its recent requests and spend chart adding up
// to the same spend, and the models the key may call with their prices. A key in a shared account with a
// credit limit also sees its account's available balance and its credit limit and credit left, as GET
// /v1/key reports them (docs/adr/0047-accounts.md). A wrong key gets a clear message; the operator view
// is absent when admin.token is unset.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { call, postChat, waitFor, type Json } from '../support/e2e.js';
import { chromiumSkipReason, launchChromium, watchPage } from '../support/browser.js';
import { usdToNano } from '../support/money.js';
import { mockConfig, startGateway, stopGateway, type CreatedKey, type GatewayProcess } from '../support/gateway-process.js';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';

const skip = chromiumSkipReason();

describe('dashboard: the key holder', { skip }, () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;
  let browser: Browser;
  let key: CreatedKey;

  before(async () => {
    mock = await startMockUpstream();
    gw = await startGateway({ config: mockConfig(mock) });
    key = await gw.createKey({ name: 'holder', balance: 3, models: ['gpt-test', 'embed-test'] });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
  });

  test('signs in with a key and sees exactly what GET /v1/key reports, and its models with prices', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await postChat(gw, key.key, { model: 'gpt-test', messages: [{ role: 'user', content: 'Hello' }] })).status, 200);
    const watched = await watchPage(browser, 'keyholder');
    const { page } = watched;
    await page.goto(`${gw.origin}/dashboard/`);
    await page.getByText('The operator view is not enabled on this gateway.').waitFor();
    await watched.shot('sign-in');
    await page.fill('#token', key.key);
    await page.click('button[type=submit]');
    await page.locator('[data-figure=balance] .value').waitFor();
    await watched.shot('me');

    const info: Json = (await call(gw, 'GET', '/key', { key: key.key })).json.data;
    for (const [figure, value] of [['balance', info.balance], ['held', info.held], ['available', info.available], ['spent', info.usage]] as const) {
      const card = page.locator(`[data-figure=${figure}]`);
      assert.equal(Number(await card.getAttribute('data-usd')), value, `${figure} is the API's figure`);
      assert.equal((await card.locator('.value').textContent())!.trim(), usdText(value), `${figure} reads as the exact amount`);
    }
    assert.ok(info.usage > 0 && info.balance < 3, 'the three calls were charged');
    // A personal account's key without a cap reads as before: no account or cap figures.
    assert.deepEqual([info.credit_limit, info.account.personal], [null, true]);
    for (const figure of ['credit-limit', 'credit-left', 'account-available']) assert.equal(await page.locator(`[data-figure=${figure}]`).count(), 0, figure);

    // Recent requests and the spend chart add up to what GET /v1/key says was spent.
    const recent = page.locator('table.usage tbody tr');
    assert.equal(await recent.count(), 3, 'the three calls, as recent requests');
    let recentNano = 0;
    for (const row of await recent.all()) recentNano += usdToNano(Number(await row.getAttribute('data-cost')));
    assert.equal(recentNano, usdToNano(info.usage), 'their costs add up to the spend');
    const chart = JSON.parse((await page.locator('[data-chart=spend]').getAttribute('data-values'))!) as number[][];
    assert.equal(chart[0]!.reduce((n, v) => n + usdToNano(v), 0), usdToNano(info.usage), 'the spend chart adds up to the spend');
    assert.equal(usdToNano(Number(await page.locator('[data-range-spend]').getAttribute('data-range-spend'))), usdToNano(info.usage));
    assert.equal(await page.locator('[data-nav]').count(), 0, 'no operator pages for a key holder');
    await page.selectOption('select[aria-label=Range]', 'hour');
    // The daily chart stays until the hourly data arrive.
    // Polled from the test, not with page.waitForFunction: a string predicate that must be polled is
    // evaluated with eval, which the dashboard's CSP (script-src 'self') refuses.
    const spendValues = async () => JSON.parse((await page.locator('[data-chart=spend]').getAttribute('data-values'))!) as number[][];
    assert.ok(await waitFor(async () => (await spendValues())[0]!.length === 24, 5000), 'the hourly chart arrives');
    const hourly = JSON.parse((await page.locator('[data-chart=spend]').getAttribute('data-values'))!) as number[][];
    assert.equal(hourly[0]!.length, 24, 'by hour: the last 24 hours');
    assert.equal(hourly[0]!.reduce((n, v) => n + usdToNano(v), 0), usdToNano(info.usage));
    await watched.shot('me-hourly');

    const models: Json[] = (await call(gw, 'GET', '/models', { key: key.key })).json.data;
    const rows = await page.locator('table.models tbody tr').allTextContents();
    assert.deepEqual(rows.length, models.length, 'one row per model the key may call');
    assert.ok(!rows.some((r) => r.startsWith('gpt-locked')), 'only the allowed models');
    // In id order, each with its kind (the list's model_type).
    assert.ok(rows[0]!.startsWith('embed-testembedding') && rows[1]!.startsWith('gpt-testchat'), rows.join(' | '));
    // The key is revoked while the tab is open: the next load signs out and says why.
    assert.equal((await gw.cli(['keys', 'revoke', key.id])).code, 0);
    watched.expect(401, /\/v1\//);
    await page.reload();
    await page.getByRole('status').filter({ hasText: 'no longer accepted' }).waitFor();
    assert.equal(await page.evaluate('sessionStorage.length'), 0, 'the revoked key is forgotten');
    await watched.shot('signed-out');
    watched.assertClean();
  });

  test('a key in a shared account with a credit limit: the account’s available balance, the cap and what is left of it', async () => {
    const created = await gw.cli(['accounts', 'create', '--name', 'team', '--balance', '4', '--json']);
    assert.equal(created.code, 0, created.stderr);
    const account = JSON.parse(created.stdout) as Json;
    const issued = await gw.cli(['keys', 'create', '--name', 'capped', '--account', account.id, '--credit-limit', '0.5', '--json']);
    assert.equal(issued.code, 0, issued.stderr);
    const capped = JSON.parse(issued.stdout) as Json;
    assert.equal((await postChat(gw, capped.key, { model: 'gpt-test', messages: [{ role: 'user', content: 'Hello' }] })).status, 200);

    const watched = await watchPage(browser, 'keyholder-capped');
    const { page } = watched;
    await page.goto(`${gw.origin}/dashboard/`);
    await page.fill('#token', capped.key);
    await page.click('button[type=submit]');
    await page.locator('[data-figure=credit-left] .value').waitFor();
    await watched.shot('me-capped');

    const info: Json = (await call(gw, 'GET', '/key', { key: capped.key })).json.data;
    assert.ok(info.credit_left < 0.5 && info.credit_left > 0, 'the call counts against the cap');
    for (const [figure, value] of [
      ['balance', info.balance],
      ['available', info.available],
      ['spent', info.usage],
      ['credit-limit', info.credit_limit],
      ['credit-left', info.credit_left],
      ['account-available', info.account.available],
    ] as const) {
      const card = page.locator(`[data-figure=${figure}]`);
      assert.equal(Number(await card.getAttribute('data-usd')), value, `${figure} is the API's figure`);
      assert.equal((await card.locator('.value').textContent())!.trim(), usdText(value), `${figure} reads as the exact amount`);
    }
    assert.equal(info.available, info.credit_left, 'what the key can hold is its credit left (less than the account has)');
    assert.match((await page.locator('[data-figure=account-available] .label').textContent())!, /team/);
    assert.match((await page.locator('[data-field=account]').textContent())!, /^team/);
    watched.assertClean();
  });

  test('a wrong key shows a clear message and signs nobody in', async () => {
    assert.deepEqual((await call(gw, 'GET', '//dashboard/config.json')).json, { operator: false }, 'no admin.token: no operator view');
    assert.equal((await call(gw, 'GET', '//admin/v1/keys', { key: 'x'.repeat(40) })).status, 404, 'and no admin API');
    const watched = await watchPage(browser, 'wrong-key');
    watched.expect(401, /\/v1\/key$/);
    const { page } = watched;
    await page.goto(`${gw.origin}/dashboard/`);
    await page.fill('#token', `tg-${'x'.repeat(43)}`);
    await page.click('button[type=submit]');
    await page.getByRole('alert').waitFor();
    assert.match((await page.getByRole('alert').textContent())!, /not valid/);
    await watched.shot('wrong-key');
    assert.equal(await page.evaluate('sessionStorage.length'), 0, 'nothing kept');
    await page.fill('#token', 'some-admin-token');
    await page.click('button[type=submit]');
    assert.match((await page.getByRole('alert').textContent())!, /no operator view/);
    watched.assertClean();
  });
});

/** The dashboard's reading of a USD amount: exact, at least two decimals, thousands separated. */
function usdText(value: number): string {
  const [whole, fraction = ''] = Math.abs(value).toFixed(9).split('.');
  return `${value < 0 ? '−' : ''}$${Number(whole).toLocaleString('en-US')}.${fraction.replace(/0+$/, '').padEnd(2, '0')}`;
}
