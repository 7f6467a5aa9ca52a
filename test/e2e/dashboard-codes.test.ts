// Redemption codes in the dashboard, in a real headless Chromium against the real gateway
// (docs/adr/0051-redemption-codes.md): the operator makes a batch on the Codes page (the codes shown
// once, and nowhere once the dialog closes), sees them listed by prefix and revokes one; the account
// token's holder redeems one with the form (the balance figure becomes the API's), and a revoked code
// shows the server's message; a key holder redeems one into the key's account.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Json } from '../support/e2e.js';
import { chromiumSkipReason, watchPage } from '../support/browser.js';
import { dashboardRig } from '../support/dashboard-rig.js';

const skip = chromiumSkipReason();
const ADMIN_TOKEN = 'dashboard-codes-admin-token-0123456789abcdef';

describe('dashboard: redemption codes', { skip }, () => {
  const rig = dashboardRig(ADMIN_TOKEN);

  const { admin, signIn } = rig;

  test('the operator makes codes (shown once) and revokes one; holders redeem with the form', async () => {
    const operator = await watchPage(rig.browser, 'codes-operator');
    const page = operator.page;
    await signIn(page, ADMIN_TOKEN);
    await page.click('[data-nav=codes]');
    await page.click('[data-action=create-codes]');
    await page.fill('#codes-amount', '1.5');
    await page.fill('#codes-count', '3');
    await page.fill('#codes-note', 'browser');
    await page.click('[data-dialog=create-codes] button[type=submit]');
    const codes = (await page.locator('[data-dialog=new-codes] [data-codes]').inputValue()).split('\n');
    assert.equal(codes.length, 3);
    for (const code of codes) assert.match(code, /^tgr-[a-z2-7]{32}$/);
    await operator.shot('codes-created');
    await page.click('[data-dialog=new-codes] [data-close]');
    assert.ok(!(await page.content()).includes(codes[0]!), 'the codes appear nowhere once the dialog closes');

    const listed: Json[] = (await admin('GET', '/codes?status=unused')).data;
    assert.equal(listed.length, 3);
    for (const c of listed) await page.locator(`tr[data-code="${c.id}"][data-status=unused][data-amount="1.5"]`).waitFor();
    const revoked = listed.find((c) => codes[2]!.startsWith(c.prefix))!;
    await page.locator(`tr[data-code="${revoked.id}"] [data-action=revoke]`).click();
    await page.click('[data-dialog=revoke] [data-confirm]');
    await page.locator(`tr[data-code="${revoked.id}"][data-status=revoked]`).waitFor();
    assert.equal((await admin('GET', `/codes/${revoked.id}`)).status, 'revoked');
    operator.assertClean();

    // The account token's holder redeems one: the balance figure becomes the API's.
    const account = await admin('POST', '/accounts', { name: 'team', balance: '2' });
    const { token } = await admin('POST', `/accounts/${account.id}/token`, {});
    const holder = await watchPage(rig.browser, 'codes-holder');
    await signIn(holder.page, token);
    await holder.page.locator('[data-figure=balance][data-usd="2"]').waitFor();
    await holder.page.fill('#redeem-code', codes[0]!);
    await holder.page.click('[data-action=redeem]');
    await holder.page.locator('[data-redeemed="1.5"][data-balance="3.5"]').waitFor();
    await holder.page.locator('[data-figure=balance][data-usd="3.5"]').waitFor();
    assert.equal((await admin('GET', `/accounts/${account.id}`)).balance, 3.5);
    // A revoked code: the server's message, nothing credited.
    holder.expect(410, /\/v1\/account\/redeem$/);
    await holder.page.fill('#redeem-code', codes[2]!);
    await holder.page.click('[data-action=redeem]');
    assert.match((await holder.page.locator('[data-redeem-error]').textContent())!, /revoked/);
    assert.equal((await admin('GET', `/accounts/${account.id}`)).balance, 3.5);
    await holder.shot('redeemed');
    holder.assertClean();

    // A key holder redeems the last one into the key's account.
    const key = await admin('POST', '/keys', { name: 'dev', account_id: account.id });
    const keyHolder = await watchPage(rig.browser, 'codes-keyholder');
    await signIn(keyHolder.page, key.key);
    await keyHolder.page.fill('#redeem-code', codes[1]!);
    await keyHolder.page.click('[data-action=redeem]');
    await keyHolder.page.locator('[data-redeemed="1.5"][data-balance="5"]').waitFor();
    assert.equal((await admin('GET', `/accounts/${account.id}`)).balance, 5);
    keyHolder.assertClean();
  });
});
