// What an agent session cost, as the operator's dashboard shows it, in a real headless Chromium against
// the real gateway process: the Sessions page lists the sessions costliest first with the API's totals;
// the usage table shows each row's client API and session and filters by both; a row's session opens the
// session's own page (#/sessions/<id>) with its cost, requests, failures and its requests. The admin API
// is the truth each view is checked against.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { chromiumSkipReason, watchPage } from '../support/browser.js';
import { dashboardRig } from '../support/dashboard-rig.js';
import { postChat, type Json } from '../support/e2e.js';
import type { CreatedKey } from '../support/gateway-process.js';
import { errorReply } from '../support/mock-upstream.js';
import { usdToNano } from '../support/money.js';

const skip = chromiumSkipReason();
const ADMIN_TOKEN = 'dashboard-sessions-admin-token-0123456789abcdef';
const BIG = 'cc-8c1d8a5e-5d1f-4b7e-9a57-1f6d2b0c3e44';
const SMALL = 'cx-0f3e2d1c-aaaa-bbbb-cccc-123456789abc';
const chat = (content: string) => ({ model: 'gpt-test', messages: [{ role: 'user', content }] });

describe('dashboard: agent sessions', { skip }, () => {
  const rig = dashboardRig(ADMIN_TOKEN);
  const admin = (path: string): Promise<Json> => rig.admin('GET', path);
  let key: CreatedKey;

  before(async () => {
    key = await rig.gw.createKey({ name: 'agents', balance: 1 });
    for (let i = 0; i < 2; i++) assert.equal((await postChat(rig.gw, key.key, chat(`turn ${i}`), { headers: { 'x-claude-code-session-id': BIG } })).status, 200);
    rig.mock.handle(errorReply(500, 'the upstream broke'));
    assert.equal((await postChat(rig.gw, key.key, chat('fails'), { headers: { 'x-claude-code-session-id': BIG } })).status, 502);
    rig.mock.handle(null);
    assert.equal((await postChat(rig.gw, key.key, chat('codex turn'), { headers: { 'session-id': SMALL } })).status, 200);
    assert.equal((await postChat(rig.gw, key.key, chat('no session'))).status, 200);
  });

  async function signIn(label: string) {
    const watched = await watchPage(rig.browser, label);
    await rig.signIn(watched.page, undefined, '[data-nav=sessions]');
    return watched;
  }

  test('the Sessions page lists each session with the totals the API gives, costliest first', async () => {
    const watched = await signIn('sessions-list');
    const { page } = watched;
    await page.click('[data-nav=sessions]');
    await page.locator('table.totals tbody tr').first().waitFor();
    const rows = await page.locator('table.totals tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-group'), tr.getAttribute('data-cost')]));
    const summary: Json[] = (await admin('/usage/summary?group_by=session')).data.filter((g: Json) => g.group !== null);
    assert.deepEqual(
      rows,
      summary.map((g) => [g.group, String(g.cost)]),
    );
    assert.deepEqual(
      rows.map((r) => r[0]),
      [BIG, SMALL],
      'the session with two paid turns first',
    );
    await watched.shot('sessions');
    watched.assertClean();
  });

  test('the usage table shows each row’s API and session, filters by session, and a row’s session opens the session’s page', async () => {
    const watched = await signIn('sessions-usage');
    const { page } = watched;
    await page.click('[data-nav=usage]');
    await page.locator('table.usage tbody tr').first().waitFor();
    const big: Json[] = (await admin(`/usage?session_id=${BIG}`)).data;
    assert.equal(big.length, 3);
    await page.fill('input[name=session_id]', BIG);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().includes('/admin/v1/usage?') && r.url().includes(`session_id=${BIG}`)),
      page.click('.filters button[type=submit]'),
    ]);
    assert.equal(response.status(), 200);
    await page.locator('[data-page-rows="3"]').waitFor();
    const shown = await page.locator('table.usage tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-request')));
    assert.deepEqual(shown, big.map((r) => r.request_id));
    assert.equal(await page.locator('table.usage tbody tr td[data-session]').count(), 3);
    assert.match((await page.locator('table.usage tbody tr').first().textContent())!, /chat.*cc-8c1d8/, 'the API and the start of the session id');
    assert.equal(usdToNano(Number(await page.locator('[data-figure=matching-spend]').getAttribute('data-usd'))), big.reduce((n, r) => n + usdToNano(r.cost), 0));

    // An API filter that matches nothing of this session.
    await page.selectOption('select[name=endpoint]', 'messages');
    await page.click('.filters button[type=submit]');
    await page.locator('[data-page-rows="0"]').waitFor();
    await page.selectOption('select[name=endpoint]', '');
    await page.click('.filters button[type=submit]');
    await page.locator('[data-page-rows="3"]').waitFor();

    await page.locator('table.usage tbody tr td[data-session] a').first().click();
    await page.waitForURL(`**/dashboard/#/sessions/${BIG}`);
    await page.locator(`[data-session="${BIG}"] [data-figure=session-cost]`).waitFor();
    const totals: Json = (await admin(`/usage/summary?group_by=session&session_id=${BIG}`)).data[0];
    assert.equal(Number(await page.locator('[data-figure=session-cost]').getAttribute('data-usd')), totals.cost);
    assert.equal(await page.locator('[data-figure=session-requests]').getAttribute('data-value'), '3');
    assert.equal(await page.locator('[data-figure=session-errors]').getAttribute('data-value'), '1');
    assert.deepEqual(await page.locator('table.totals tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-group'))), ['chat', 'gpt-test'], 'by API, then by model');
    await page.locator('table.usage tbody tr').first().waitFor();
    assert.deepEqual(
      await page.locator('table.usage tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-request'))),
      big.map((r) => r.request_id),
      'its requests, newest first',
    );
    await watched.shot('session-page');
    // A row of the session opens its request.
    await page.locator(`tr[data-request="${big[0].request_id}"]`).click();
    await page.waitForURL(`**/dashboard/#/usage/${big[0].request_id}`);
    await page.locator('[data-field=session] a', { hasText: BIG }).waitFor();
    watched.assertClean();
  });
});
